import type { NatsConnection } from '@nats-io/transport-node';
import { jsonCodec } from '../codec.js';
import type { RunChunk } from '../../runtime/serveActors.js';
import { Subject } from '../../actors/subjects.js';

/** A message on a chunk subject that is a {@link RunChunk} of `traceId`, or undefined (garbage is dropped). */
function chunkOf(data: Uint8Array, traceId: string): RunChunk | undefined {
  let value: unknown;
  try {
    value = jsonCodec.decode(data);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { traceId: of, iteration, attempt, text } = value as Record<string, unknown>;
  if (of !== traceId || typeof text !== 'string' || !Number.isInteger(iteration) || !Number.isInteger(attempt)) return undefined;
  return { traceId, iteration: iteration as number, attempt: attempt as number, text };
}

/**
 * Follows the pieces of a cluster run's answers as its model worker publishes them on
 * `<prefix>.runs.chunk.<traceId>` (live only: they are never stored). Returns a function that stops.
 *
 * @example
 * ```ts
 * const stop = followRunChunks(nc, 'redflow', traceId, (chunk) => process.stdout.write(chunk.text));
 * ```
 */
export function followRunChunks(nc: NatsConnection, prefix: string, traceId: string, onChunk: (chunk: RunChunk) => void): () => void {
  const subscription = nc.subscribe(Subject.runChunk(prefix, traceId), {
    callback: (error, message) => {
      if (error) return;
      const chunk = chunkOf(message.data, traceId);
      if (chunk === undefined) return;
      try {
        onChunk(chunk);
      } catch {
        // A live view's failure is its own.
      }
    },
  });
  return () => subscription.unsubscribe();
}
