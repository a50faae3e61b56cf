import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { Storage, Subject } from '../../actors/subjects.js';
import { validators } from '../../contracts/schemas.js';
import { AgentEventType, type AgentEvent } from '../../events/eventTypes.js';
import { parseTraceEvents } from '../cluster/traceEvent.js';

/** A run's first event, as found in the trace stream. */
export type RunStartedEvent = Extract<AgentEvent, { type: typeof AgentEventType.RunStarted }>;

/** Options of {@link listRunStarts}. */
export interface ListRunStartsOptions {
  readonly prefix: string;
  /** How many runs to return, at most. */
  readonly limit: number;
  /** Keeps only the runs this accepts (a flow filter); default all. */
  readonly accept?: (started: RunStartedEvent) => boolean;
  /**
   * How many `run.started` events to look at, at most, before giving up on finding `limit`
   * accepted ones: a filter that matches few runs never reads the whole history. Default 5,000.
   */
  readonly maxScanned?: number;
  /** How many stream sequences the first (newest) window covers; default 4,096. */
  readonly firstWindow?: number;
}

/** The stream sequences looked at by the first window; each next window looks back four times further. */
const FIRST_WINDOW = 4096;
/** Messages asked for per pull: small, since the last pull of a window may overshoot its end. */
const BATCH = 64;
const DEFAULT_MAX_SCANNED = 5000;

/**
 * The newest runs in the trace stream, newest first, as their `run.started` events.
 *
 * The runs bucket only holds runs under way, so finished runs are found in the stream itself.
 * Every run's first event is stored on `<prefix>.log.<traceId>.run.started`, so a consumer filtered
 * on `<prefix>.log.*.run.started` sees one message per run, in the order they started, and the
 * server skips every other event without sending it. JetStream consumers only read forwards, so
 * the stream is read backwards in windows of stream sequences: the last 4,096 messages first,
 * then the 16,384 before them, and so on, each window by a short-lived consumer starting at the
 * window's first sequence and stopped at its last. It ends once `limit` runs are found, the start
 * of the stream is reached, or `maxScanned` starts were looked at. The cost follows the number of
 * runs returned and the stream's depth in windows (a few requests each), not the stream's size.
 *
 * A message on a `run.started` subject that is not a valid `run.started` event of its trace id
 * (the subjects are open to anyone allowed to publish there) is skipped.
 *
 * @example
 * ```ts
 * const newest = await listRunStarts(nc, { prefix: 'redflow', limit: 20 });
 * ```
 */
export async function listRunStarts(nc: NatsConnection, options: ListRunStartsOptions): Promise<RunStartedEvent[]> {
  const stream = Storage.traceStream(options.prefix);
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const maxScanned = options.maxScanned ?? DEFAULT_MAX_SCANNED;
  let info;
  try {
    info = await jsm.streams.info(stream);
  } catch (error) {
    // No stream yet: no run has ever been stored under this prefix.
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return [];
    throw error;
  }
  const { first_seq: firstSeq, last_seq: lastSeq, messages } = info.state;
  if (messages === 0 || options.limit <= 0) return [];

  const found: RunStartedEvent[] = [];
  let scanned = 0;
  let end = lastSeq;
  let window = Math.max(1, options.firstWindow ?? FIRST_WINDOW);
  while (end >= firstSeq && found.length < options.limit && scanned < maxScanned) {
    const start = Math.max(firstSeq, end - window + 1);
    const inWindow = await readWindow(jsm, js, stream, Subject.log(options.prefix, '*', AgentEventType.RunStarted), start, end);
    scanned += inWindow.length;
    // The window is in stream order: walk it from its newest end.
    for (let i = inWindow.length - 1; i >= 0 && found.length < options.limit; i--) {
      const started = inWindow[i] as RunStartedEvent;
      if (options.accept === undefined || options.accept(started)) found.push(started);
    }
    end = start - 1;
    window *= 4;
  }
  return found;
}

/** The valid `run.started` events stored between the stream sequences `start` and `end`, in order. */
async function readWindow(
  jsm: JetStreamManager,
  js: JetStreamClient,
  stream: string,
  filter: string,
  start: number,
  end: number,
): Promise<RunStartedEvent[]> {
  // An ephemeral consumer rather than an ordered one: its creation answers how many messages
  // match from `start` on, so an empty window costs no wait for messages that will never come.
  const created = await jsm.consumers.add(stream, {
    filter_subject: filter,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: start,
    ack_policy: AckPolicy.None,
    mem_storage: true,
    num_replicas: 1,
    // Removed by the server soon after, even if this process dies before deleting it.
    inactive_threshold: nanos(30_000),
  });
  const events: RunStartedEvent[] = [];
  try {
    let pending = created.num_pending;
    const consumer = js.consumers.getConsumerFromInfo(created);
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(BATCH, pending), expires: 5000 });
      let got = 0;
      let pastEnd = false;
      for await (const message of batch) {
        got++;
        pending = message.info.pending;
        if (message.seq > end) {
          pastEnd = true;
          continue;
        }
        const event = asRunStarted(message.subject, message.data, filter);
        if (event) events.push(event);
      }
      if (pastEnd || got === 0) break;
    }
  } finally {
    await jsm.consumers.delete(stream, created.name).catch(() => undefined);
  }
  return events;
}

/** The message as a `run.started` event of the trace id its subject names, or `undefined`. */
function asRunStarted(subject: string, data: Uint8Array, filter: string): RunStartedEvent | undefined {
  const traceToken = filter.split('.').indexOf('*');
  const traceId = subject.split('.')[traceToken];
  // A run's first message holds its run.started first (alone, or with the events recorded with it).
  const event = parseTraceEvents(data)?.[0];
  if (!event || !validators.agentEvent(event)) return undefined;
  if (event.type !== AgentEventType.RunStarted || event.traceId !== traceId || event.seq !== 1) return undefined;
  return event;
}
