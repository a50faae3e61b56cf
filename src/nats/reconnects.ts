import type { NatsConnection, Status } from '@nats-io/transport-node';

/**
 * Calls `onReconnect` each time `nc` is connected again after losing its server, until the
 * returned function is called. A JetStream pull that was waiting when the connection dropped may
 * have had messages handed to the dead connection: nats.js pulls again on the same consumer,
 * whose delivered sequence is already past them, and only notices the gap at the next message,
 * which, for a run that has ended, never comes. Followers use this to start over from what they
 * have given out.
 *
 * @example
 * ```ts
 * const stop = watchReconnects(nc, () => messages.stop());
 * try { for await (const message of messages) handle(message); } finally { stop(); }
 * ```
 */
export function watchReconnects(nc: NatsConnection, onReconnect: () => void): () => void {
  const statuses = nc.status() as AsyncIterable<Status> & { stop(): void };
  void (async () => {
    for await (const status of statuses) if (status.type === 'reconnect') onReconnect();
  })().catch(() => undefined);
  return () => statuses.stop();
}
