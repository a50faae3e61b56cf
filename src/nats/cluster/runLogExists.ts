import type { NatsConnection } from '@nats-io/transport-node';
import { Storage, Subject } from '../../actors/subjects.js';
import { AgentEventType, type AgentEvent } from '../../events/eventTypes.js';
import { parseTraceEvents } from './traceEvent.js';
import { lastStoredOn } from '../jetstream/storeRequests.js';

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
  return (await storedRunStart(nc, prefix, traceId)) !== null;
}

/**
 * The data of the message holding run `traceId`'s first event (`run.started`, always in a message
 * of its own), or null when the trace stream has none (or there is no stream yet). A new run's
 * look finds none: that answer is read as data, with no Error made for it (see storeRequests.ts).
 */
async function storedRunStart(nc: NatsConnection, prefix: string, traceId: string): Promise<Uint8Array | null> {
  return (await lastStoredOn(nc, Storage.traceStream(prefix), Subject.log(prefix, traceId, AgentEventType.RunStarted)))?.data ?? null;
}

/**
 * Run `traceId`'s `run.started` as stored, or undefined when its log has none (or holds something
 * else on that subject).
 *
 * @example
 * ```ts
 * const started = await readRunStart(nc, 'redflow', traceId);
 * started?.data.input; // what the run was started with
 * ```
 */
export async function readRunStart(nc: NatsConnection, prefix: string, traceId: string): Promise<Extract<AgentEvent, { type: 'run.started' }> | undefined> {
  const stored = await storedRunStart(nc, prefix, traceId);
  const [first] = stored === null ? [] : (parseTraceEvents(stored) ?? []);
  return first?.type === AgentEventType.RunStarted && first.traceId === traceId ? first : undefined;
}
