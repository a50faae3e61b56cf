import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { createRequestMux, type RequestMux } from '../requestMux.js';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { DEFAULT_SUBJECT_PREFIX, Storage, Subject } from '../../actors/subjects.js';
import { Header } from '../../actors/transport.js';
import type { EventStore, LogProblem, ReadResult } from '../../events/eventStore.js';
import { AgentEventType, type AgentEvent } from '../../events/eventTypes.js';
import { createRunPathCheck } from '../../events/runPath.js';
import { followJetStreamRun } from './followRun.js';
import { decodeRunMessage, runProblem } from './runMessage.js';
import { storeUnavailable } from './storeUnavailable.js';
import { ensureLogStream } from './logStream.js';
import { lastStoredOn, nextStoredOn } from './storeRequests.js';

/** Options of {@link openJetStreamEventStore}. */
export interface JetStreamEventStoreOptions {
  /**
   * Subject prefix (default `redflow`): the log is stored on `<prefix>.log.<traceId>.<type>` and
   * each event is published live on `<prefix>.trace.<traceId>.<type>`.
   */
  readonly prefix?: string;
  /**
   * How long JetStream remembers event ids to refuse a second writer of the same `seq` (its
   * duplicate window). Default 1 hour; runs are fenced beyond it by their ownership lease.
   */
  readonly duplicateWindowMs?: number;
  /** How long one append keeps trying through a lost connection or a restarting server. Default 30 s. */
  readonly appendTimeoutMs?: number;
  /** File (default, durable) or memory storage, used when the stream is created. */
  readonly storage?: 'file' | 'memory';
  /** Replicas of the stream in a cluster (default 1; see `replication.ts`). */
  readonly replicas?: number;
  /** Place the stream only on servers with these tags. */
  readonly placementTags?: readonly string[];
}

/** A JetStream event store: also tells the stream's name. */
export interface JetStreamEventStore extends EventStore {
  readonly stream: string;
}

const encoder = new TextEncoder();
/** A run's log that could not be read (see lastStored). */
const UNREADABLE = Symbol('unreadable');
const DEFAULT_DUPLICATE_WINDOW_MS = 60 * 60 * 1000;
const DEFAULT_APPEND_TIMEOUT_MS = 30_000;

/**
 * The event log in a JetStream stream over the log subjects `<prefix>.log.>`, and each stored
 * event published live, on its own, on `<prefix>.trace.<traceId>.<type>`.
 *
 * **Live.** Once an append is acknowledged (stored), each of its events is published with core
 * NATS on `<prefix>.trace.<traceId>.<type>`: one message per event, the event's JSON, headers
 * `Redflow-Trace-Id` and `Redflow-Seq`. A plain subscriber to `<prefix>.trace.<traceId>.>` gets
 * every event of the run, in order (one writer publishes a run's events one append after the
 * other); `<prefix>.trace.*.tool.completed` gets every tool completion. Core NATS keeps nothing: a
 * subscriber that was away reads the missed events from the log (`follow`). Not stored, so an
 * event is never published live before it is in the log, and it costs no acknowledgement.
 *
 * **Messages of the log.** A message holds one event, as JSON, or several consecutive events of one
 * run recorded together, as a JSON array (`appendMany`: the recorder appends what it recorded
 * between two effects in one message, so an iteration costs two writes and two acknowledgements
 * instead of four). Its subject is `<prefix>.log.<traceId>.<type of its last event>`; a run's
 * `run.started` always has a message of its own (runs are listed and found by it). Its
 * `Nats-Msg-Id` is its first event's id. One message rather
 * than several published without waiting for each other: a message is stored whole or not at all,
 * so the log never holds an event without the ones before it, and a writer that lost the run to
 * another is stopped by the fence below before anything after its refused write is stored.
 *
 * Two writers cannot both append to one run: each message is published with `Nats-Msg-Id` =
 * its first event's id `<traceId>:<seq>`, so the stream takes one write per seq and answers the
 * other writer's publish as a duplicate; the loser gets `LOG_CONCURRENT_WRITER` and must stop
 * touching the run. A duplicate is another writer's only when the run's log says so: the message
 * the ack names, or the run's last message, byte-identical to ours is our own earlier attempt, and
 * a log still ending just before our seq holds no one's (the server remembered an id it did not
 * store for this run), and a log that cannot be read says nothing: the publish is tried again until
 * `appendTimeoutMs`. (Each writer's next message starts right after the last event it knows is
 * stored, which is the end of a stored message: two writers that go on from the same point name
 * their messages alike.)
 * (nats-server 2.11 can also check the last sequence of a wildcard subject, which would fence
 * writers past the duplicate window; 2.9, the version these tests run on, cannot.) A publish that
 * fails because the connection dropped, or that the server answers 503 (a leader stepping down:
 * "raft: not leader"), is sent again with the same id until `appendTimeoutMs`,
 * so a restarting server loses nothing and stores nothing twice.
 *
 * `follow` reads a run through nats.js's ordered consumer over its subjects (see `followRun.ts`):
 * the stored messages, then each one as it is stored, ending with the run.
 *
 * @example
 * ```ts
 * const store = await openJetStreamEventStore(nc, { prefix: 'redflow' });
 * const run = startRun({ ...environment, store, input });
 * ```
 */
export async function openJetStreamEventStore(nc: NatsConnection, options: JetStreamEventStoreOptions = {}): Promise<JetStreamEventStore> {
  const prefix = options.prefix ?? DEFAULT_SUBJECT_PREFIX;
  const stream = Storage.traceStream(prefix);
  const appendTimeoutMs = options.appendTimeoutMs ?? DEFAULT_APPEND_TIMEOUT_MS;
  // The manager asks the server for the account first: a timeout there is the store not answering.
  const jsm = await jetstreamManager(nc).catch((error: unknown) => {
    // No JetStream at all (JetStreamNotEnabled) is left as it is: the CLI says how to turn it on.
    throw error instanceof Error && error.name === 'JetStreamNotEnabled' ? error : storeUnavailable('cannot reach JetStream', error);
  });
  const js = jetstream(nc);
  await ensureLogStream(jsm, js, stream, prefix, { ...options, duplicateWindowMs: options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS });
  const mux = createRequestMux(nc);
  const lastSeqs = new Map<string, number>();
  // Room left for the subject and headers under the server's largest message.
  const maxMessageBytes = (nc.info?.max_payload ?? 1024 * 1024) - 4096;

  /**
   * One message holding `events` (one, or several consecutive events of one run), then each event
   * live on its trace subject. `eventBytes` is each event's JSON in UTF-8; `data` is the message.
   */
  const write = async (events: readonly AgentEvent[], eventBytes: readonly Uint8Array[], data: Uint8Array): Promise<void> => {
    const first = events[0] as AgentEvent;
    const last = lastSeqs.get(first.traceId);
    if (last !== undefined && first.seq !== last + 1) {
      throw concurrent(first, `expected seq ${last + 1}, got ${first.seq}`);
    }
    const lastEvent = events[events.length - 1] as AgentEvent;
    const subject = Subject.log(prefix, first.traceId, lastEvent.type);
    const deadline = Date.now() + appendTimeoutMs;
    for (;;) {
      const ack = await publishPatiently(mux, subject, data, first.id, Math.max(1000, deadline - Date.now()));
      if (!ack.duplicate) break;
      // Either an earlier attempt of ours whose ack was lost, or another writer's events.
      const stored = await jsm.streams.getMessage(stream, { seq: ack.seq }).catch(() => null);
      if (stored && sameBytes(stored.data, data)) break;
      // The server may answer a duplicate for an id whose write it never committed (nats-server 2.9
      // during a cut), or with a sequence that is not the message: the run's last message decides.
      const end = await lastStored(first.traceId);
      if (end !== UNREADABLE) {
        if (end && sameBytes(end.data, data)) break;
        if (end?.seq !== first.seq - 1) throw concurrent(first, `seq ${first.seq} was written by another writer (the log ends at seq ${end?.seq ?? 0})`);
      }
      // Nothing holds this seq yet (the id is remembered but not stored), or the log cannot be read
      // now (an election: not a sign of another writer): try again until the deadline.
      if (Date.now() >= deadline) throw storeUnavailable(`cannot append to ${subject}`, new Error(`seq ${first.seq} answered as a duplicate, and ${end === UNREADABLE ? 'the log could not be read' : 'not stored'}`));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    lastSeqs.set(first.traceId, lastEvent.seq);
    publishLive(nc, prefix, events, eventBytes);
  };
  /**
   * The run's last stored message and the seq of its last event; undefined when it has none (or
   * holds no event), UNREADABLE when the stream does not answer.
   */
  const lastStored = async (traceId: string): Promise<{ seq: number; data: Uint8Array } | undefined | typeof UNREADABLE> => {
    let message;
    try {
      message = await jsm.streams.getMessage(stream, { last_by_subj: Subject.runLog(prefix, traceId) });
    } catch {
      // nats.js answers null for "no message": a throw is a stream that does not answer.
      return UNREADABLE;
    }
    if (!message) return undefined;
    try {
      const value = JSON.parse(decoderForAcks.decode(message.data)) as unknown;
      const end = (Array.isArray(value) ? value.at(-1) : value) as Partial<AgentEvent> | undefined;
      return typeof end?.seq === 'number' ? { seq: end.seq, data: message.data } : undefined;
    } catch {
      return undefined;
    }
  };
  const writeOne = (event: AgentEvent): Promise<void> => {
    // One encoding: the log's message and the live message are the same bytes.
    const bytes = encoder.encode(JSON.stringify(event));
    return write([event], [bytes], bytes);
  };

  return {
    stream,
    append(event) {
      return writeOne(event);
    },

    async appendMany(given) {
      let events = given;
      const first = events[0];
      if (first === undefined) return;
      events.forEach((event, i) => {
        if (event.traceId !== first.traceId || event.seq !== first.seq + i) throw concurrent(event, `appended together with ${first.id}, but not the event after the one before it`);
      });
      if (first.type === AgentEventType.RunStarted || events.length === 1) {
        // A run's start is found by its subject (runLogExists, the runs list): a message of its own.
        await writeOne(first);
        events = events.slice(1);
        if (events.length === 0) return;
        if (events.length === 1) return writeOne(events[0] as AgentEvent);
      }
      // Each event serialised and encoded once: the live messages, and joined, the log's message.
      const eventBytes = events.map((event) => encoder.encode(JSON.stringify(event)));
      const data = jsonArrayOf(eventBytes);
      if (data.byteLength <= maxMessageBytes) return write(events, eventBytes, data);
      // Too large for one message together: one message each, in order.
      for (const [i, event] of events.entries()) await write([event], [eventBytes[i] as Uint8Array], eventBytes[i] as Uint8Array);
    },

    follow(traceId, afterSeq, followOptions) {
      return followJetStreamRun(nc, stream, prefix, traceId, afterSeq, followOptions);
    },

    async read(traceId) {
      const result = await readRun(nc, stream, prefix, traceId);
      // A writer that resumes a run goes on from what it read. Only ever forward: a read that
      // overlapped this store's own appends ends holding fewer events than are stored, and taking
      // its end back would refuse the writer's next append as another writer's.
      const last = result.events.at(-1);
      if (last && last.seq > (lastSeqs.get(traceId) ?? 0)) lastSeqs.set(traceId, last.seq);
      return result;
    },

    async close() {
      lastSeqs.clear();
      mux.close();
    },
  };
}

/** What a JetStream publish is acknowledged with. */
interface Ack {
  readonly seq: number;
  readonly duplicate: boolean;
}

const decoderForAcks = new TextDecoder();
/** The status of a JetStream publish the server could not take now (see publishPatiently). */
const SERVICE_UNAVAILABLE = 503;

/**
 * A JetStream publish (a core publish with `Nats-Msg-Id`, answered by a PubAck) over the request
 * mux, retried with the same id through timeouts and a restarting server until `timeoutMs`.
 */
async function publishPatiently(mux: RequestMux, subject: string, data: Uint8Array, msgID: string, timeoutMs: number): Promise<Ack> {
  const deadline = Date.now() + timeoutMs;
  const msgHeaders = natsHeaders();
  msgHeaders.set('Nats-Msg-Id', msgID);
  for (let attempt = 0; ; attempt++) {
    const outcome = await mux.request(subject, data, msgHeaders, Math.max(1000, Math.min(5000, deadline - Date.now())));
    if (outcome.kind === 'reply') {
      let ack: { seq?: number; duplicate?: boolean; error?: { code?: number; description?: string } };
      try {
        ack = JSON.parse(decoderForAcks.decode(outcome.msg.data)) as typeof ack;
      } catch (error) {
        throw storeUnavailable(`cannot append to ${subject}: the server's acknowledgement is not JSON`, error);
      }
      // 503: the server could not propose the write now, most often "raft: not leader" from a
      // leader stepping down in an election. Not stored: another try with the same id, as after a
      // timeout. Any other refusal by the stream is final.
      if (ack.error?.code === SERVICE_UNAVAILABLE && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
        continue;
      }
      if (ack.error) throw storeUnavailable(`cannot append to ${subject}`, new Error(ack.error.description ?? `error ${ack.error.code ?? ''}`));
      if (typeof ack.seq !== 'number') throw storeUnavailable(`cannot append to ${subject}: no sequence in the acknowledgement`, undefined);
      return { seq: ack.seq, duplicate: ack.duplicate === true };
    }
    if (outcome.kind === 'denied') throw storeUnavailable(`cannot append to ${subject}`, new Error(outcome.reason));
    // Timeouts, no responders while the server restarts, a dropped connection: another try with the same id.
    if (Date.now() >= deadline) throw storeUnavailable(`cannot append to ${subject}`, new Error(`no acknowledgement (${outcome.kind})`));
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
  }
}

/**
 * Run `traceId`'s log, message after message, from the stream's leader: its `run.started` (a literal
 * subject, found without a scan), then each next message on the run's subjects, until there is none.
 * A message holds one event or several (see appendMany).
 *
 * Not through a consumer: nats-server places one on any replica of the stream, at random, and a
 * replica catching up after a restart, or a moment behind its leader, ended the read early as if
 * the log were whole; and on a cluster each consumer made is a proposal to the meta leader, which
 * a loaded cluster recovering from a fault answered with timeouts for a minute (takeovers and
 * starting workers waiting on it). The leader answers these gets itself. An unknown run is told
 * at once, not after a fetch's wait.
 */
async function readRun(nc: NatsConnection, stream: string, prefix: string, traceId: string): Promise<ReadResult> {
  const events: AgentEvent[] = [];
  const problems: LogProblem[] = [];
  const runPath = createRunPathCheck();
  let position = 0;
  const take = (data: Uint8Array): void => {
    position++;
    if (problems.length > 0) return;
    const verdict = decodeRunMessage(data, traceId, events.length + 1, position);
    if ('problem' in verdict) {
      problems.push(verdict.problem);
      return;
    }
    // A message is written whole: one of its events the run could not take discards it all.
    let impossible: string | undefined;
    for (const event of verdict.events) if (impossible === undefined) impossible = runPath.next(event);
    if (impossible !== undefined) problems.push(runProblem(ErrorCode.LOG_PATH_INVALID, position, `not a step the run could take: ${impossible}`));
    else events.push(...verdict.events);
  };
  try {
    const subjects = Subject.runLog(prefix, traceId);
    const first = await lastStoredOn(nc, stream, Subject.log(prefix, traceId, AgentEventType.RunStarted));
    for (let next = first; next !== null; next = await nextStoredOn(nc, stream, subjects, next.seq + 1)) take(next.data);
  } catch (error) {
    throw storeUnavailable(`cannot read run ${traceId}`, error);
  }
  if (position === 0) {
    throw new RedflowError(
      errorInfo(ErrorCode.LOG_NOT_FOUND, `no events for run ${traceId} in stream ${stream}`, {
        hint: 'check the trace id and the subject prefix',
      }),
    );
  }
  return { events, problems };
}

/**
 * Each event of a stored append on its own trace subject (core NATS, nothing waits): what live
 * subscribers see. A connection closing meanwhile loses only the live copies; the log has them.
 */
function publishLive(nc: NatsConnection, prefix: string, events: readonly AgentEvent[], eventBytes: readonly Uint8Array[]): void {
  if (nc.isClosed()) return;
  for (const [i, event] of events.entries()) {
    const liveHeaders = natsHeaders();
    liveHeaders.set(Header.TraceId, event.traceId);
    liveHeaders.set(Header.Seq, String(event.seq));
    try {
      nc.publish(Subject.trace(prefix, event.traceId, event.type), eventBytes[i], { headers: liveHeaders });
    } catch {
      // Closed or draining: the live copies are lost, the log is not.
      return;
    }
  }
}

function concurrent(event: AgentEvent, why: string): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.LOG_CONCURRENT_WRITER, `run ${event.traceId}: ${why}`, {
      hint: 'another worker owns this run now; this one must stop touching it',
    }),
  );
}

const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

/**
 * The JSON array of events already encoded, built from their bytes (UTF-8 of a concatenation is the
 * concatenation of the UTF-8s): the same bytes as encoding `[a,b,…]`, without encoding twice.
 */
function jsonArrayOf(parts: readonly Uint8Array[]): Uint8Array {
  let length = parts.length + 1;
  for (const part of parts) length += part.byteLength;
  const out = new Uint8Array(length);
  out[0] = OPEN;
  let at = 1;
  for (const [i, part] of parts.entries()) {
    if (i > 0) out[at++] = COMMA;
    out.set(part, at);
    at += part.byteLength;
  }
  out[at] = CLOSE;
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
