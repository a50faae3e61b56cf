import type { CheckedSettings } from './modelSettings.js';

/** What provider libraries are given as their logger: they must print nothing (a debug line may show a header). */
const SILENT_LOGGER = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
} as const;

/**
 * The client options both provider libraries (`openai`, `@anthropic-ai/sdk`) take alike:
 *
 * - a key always (a placeholder without one), so the library looks for none in the environment or
 *   elsewhere; the caller removes the header it would send when there is no real key;
 * - the guarded `fetch`;
 * - no retries and a timeout past the attempt's own deadline: Redflow's retries and deadline
 *   apply (see `createStreamingModel`), the library's waits would outlast an abort;
 * - no logging.
 */
export function libraryClientOptions(settings: CheckedSettings, fetch: typeof globalThis.fetch, apiKey: string | undefined) {
  return {
    apiKey: apiKey ?? 'no-key',
    baseURL: settings.baseUrl,
    ...(settings.query !== undefined && { defaultQuery: settings.query }),
    fetch,
    maxRetries: 0,
    timeout: Math.ceil(settings.timeoutMs) + 1000,
    logLevel: 'off' as const,
    logger: SILENT_LOGGER,
  };
}

/**
 * Clients by API key: the configured key's client is made once (at the first call), a client for
 * a key given to one call is made for that call and let go with it.
 */
export function clientsByKey<C>(configuredKey: string | undefined, make: (apiKey: string | undefined) => Promise<C>): (apiKey: string | undefined) => Promise<C> {
  let configured: Promise<C> | undefined;
  return (apiKey) => (apiKey === configuredKey ? (configured ??= make(apiKey)) : make(apiKey));
}
