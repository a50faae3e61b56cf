import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Storage, Subject } from '../actors/subjects.js';
import { AgentEventType } from '../events/eventTypes.js';

/**
 * True when the trace stream holds run `traceId`'s log, finished or not: its first event, which
 * every log starts with. One direct read of a literal subject, so an unknown run costs no wait
 * (reading the log through a consumer would wait for events that never come).
 *
 * @example
 * ```ts
 * if (await runLogExists(nc, 'redflow', traceId)) refuse('that trace id is taken');
 * ```
 */
export async function runLogExists(nc: NatsConnection, prefix: string, traceId: string): Promise<boolean> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  try {
    const first = await jsm.streams.getMessage(Storage.traceStream(prefix), { last_by_subj: Subject.trace(prefix, traceId, AgentEventType.RunStarted) });
    return first !== null;
  } catch (error) {
    // No stream yet: no run was ever logged under this prefix.
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return false;
    throw error;
  }
}
