import type { NatsConnection, Server, ServerInfo, Status } from '@nats-io/transport-node';

// Failing over from a server that went silent (a network partition) rather than one that closed
// its connections: nats.js's connection options set the pace (connect.ts), these close the gaps.

/** The part of nats.js's connection internals this module reaches: the socket under the protocol. */
interface WithSocket {
  readonly protocol?: { readonly transport?: { readonly socket?: { destroy(): void; readonly destroyed?: boolean } } };
}

/**
 * Destroys the socket of `nc` as soon as nats.js declares the connection stale (pings unanswered),
 * so that it reconnects to another server instead of waiting on a dead one.
 *
 * Why: on a stale connection nats.js closes its transport by first writing to the socket and
 * waiting for that write to be flushed. When the server is cut off by a network partition (not
 * closed: its TCP connection stays open and silent) and the client had more to send than the
 * kernel's send buffer holds — any busy worker — that write never completes, so the connection is
 * neither closed nor reconnected until TCP gives up (about 15 minutes): every request times out
 * meanwhile. Destroying the socket fails the pending write, which lets nats.js finish closing and
 * reconnect. Relies on nats.js internals (`protocol.transport.socket`); if they are not there,
 * it does nothing and nats.js behaves as before.
 *
 * Returns a function that stops watching.
 *
 * @example
 * ```ts
 * const nc = await connect({ servers, pingInterval: 2000, maxPingOut: 3 });
 * const stop = dropStaleSockets(nc);
 * // … on close: stop();
 * ```
 */
export function dropStaleSockets(nc: NatsConnection): () => void {
  const statuses = nc.status() as AsyncIterable<Status> & { stop(): void };
  void (async () => {
    for await (const status of statuses) {
      if (status.type !== 'staleConnection') continue;
      const socket = (nc as unknown as WithSocket).protocol?.transport?.socket;
      if (socket && socket.destroyed !== true) socket.destroy();
    }
  })().catch(() => undefined);
  return () => statuses.stop();
}

/**
 * nats.js `reconnectToServer` handler: on a reconnect, dial the server of the pool dialled longest
 * ago (never dialled first), so the server just lost comes last. Without it nats.js may dial the
 * lost server again first, and a server cut off by a partition costs a whole connect timeout
 * (5 s) before the next one is tried. The first connect keeps nats.js's own (random) choice.
 *
 * @example
 * ```ts
 * const nc = await connect({ servers: ['a:4222', 'b:4222', 'c:4222'], reconnectToServer: leastRecentlyDialled });
 * ```
 */
export function leastRecentlyDialled(pool: readonly Server[], info: ServerInfo | null): Server | null {
  if (info === null || pool.length === 0) return null;
  return pool.reduce((oldest, server) => (server.lastConnect < oldest.lastConnect ? server : oldest));
}
