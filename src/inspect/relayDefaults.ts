// The relay's defaults, apart from the relay itself so that help texts can name them without
// loading the relay's WebSocket server.

/**
 * The relay's port unless told otherwise: the one @statelyai/inspect's relay uses.
 *
 * @example
 * ```ts
 * console.log(`http://127.0.0.1:${DEFAULT_RELAY_PORT}`); // http://127.0.0.1:8080
 * ```
 */
export const DEFAULT_RELAY_PORT = 8080;

/** Messages the relay keeps for a page that connects late (a browser opening after the run). */
export const DEFAULT_RELAY_BUFFER = 10_000;
