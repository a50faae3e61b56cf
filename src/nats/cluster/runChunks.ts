import type { NatsConnection } from '@nats-io/transport-node';
import { jsonCodec } from '../codec.js';
import type { RunLiveMessage } from '../../runtime/serveActors.js';
import type { ToolProgress } from '../../actors/tool.js';
import { Subject } from '../../actors/subjects.js';

/** A message on a run's live subject that is a {@link RunLiveMessage} of `traceId`, or undefined (garbage is dropped). */
function liveMessageOf(data: Uint8Array, traceId: string): RunLiveMessage | undefined {
  let value: unknown;
  try {
    value = jsonCodec.decode(data);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { traceId: of, iteration, attempt, text, toolCallId, progress } = value as Record<string, unknown>;
  if (of !== traceId || !Number.isInteger(iteration)) return undefined;
  if (typeof toolCallId === 'string') {
    // A tool call's progress is shown; where its work lives is for the run's core worker alone.
    if (typeof progress !== 'object' || progress === null) return undefined;
    return { traceId, iteration: iteration as number, toolCallId, progress: progressOf(progress as Record<string, unknown>) };
  }
  if (typeof text !== 'string' || !Number.isInteger(attempt)) return undefined;
  return { traceId, iteration: iteration as number, attempt: attempt as number, text };
}

/** The fields of a progress report a view shows, each only when it has the right type. */
function progressOf({ progress, total, message }: Record<string, unknown>): ToolProgress {
  return {
    ...(typeof progress === 'number' && { progress }),
    ...(typeof total === 'number' && { total }),
    ...(typeof message === 'string' && { message }),
  };
}

/**
 * Follows the pieces of a cluster run's answers as its model worker publishes them on
 * `<prefix>.runs.chunk.<traceId>`, and its tool calls' progress as its tool workers publish it
 * there (`isToolUpdate` tells them apart; live only: they are never stored). Returns a function that stops.
 *
 * @example
 * ```ts
 * const stop = followRunChunks(nc, 'redflow', traceId, (chunk) => {
 *   if (!isToolUpdate(chunk)) process.stdout.write(chunk.text);
 * });
 * ```
 */
export function followRunChunks(nc: NatsConnection, prefix: string, traceId: string, onChunk: (chunk: RunLiveMessage) => void): () => void {
  const subscription = nc.subscribe(Subject.runChunk(prefix, traceId), {
    callback: (error, message) => {
      if (error) return;
      const chunk = liveMessageOf(message.data, traceId);
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
