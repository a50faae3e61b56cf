import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { watchReconnects } from '../reconnects.js';
import { Storage, Subject } from '../../actors/subjects.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { isValidTraceId } from '../../runtime/ids.js';
import { isTerminal, type AgentEvent } from '../../events/eventTypes.js';
import { orderedConsumer } from './followRun.js';
import { createRunMessageReader } from './runMessage.js';
import { storeUnavailable } from './storeUnavailable.js';

/** Messages asked for at once by the one consumer: it carries every followed run's messages. */
const PULL_MESSAGES = 1024;
/** How long the consumer stays once nobody follows, so a client starting runs in waves keeps it. */
const IDLE_CLOSE_MS = 2000;
/** How many new consumers in a row may end without a message before the followers are failed. */
const MAX_IDLE_RESTARTS = 5;

/** Options of {@link createSharedRunFollow}. */
export interface SharedRunFollowOptions {
  readonly nc: NatsConnection;
  /** The subject prefix of the cluster (default `redflow`). */
  readonly prefix?: string;
}

/**
 * One JetStream consumer following many new runs of a prefix for one client (see
 * {@link createSharedRunFollow}).
 */
export interface SharedRunFollow {
  /** The subject prefix whose runs it follows. */
  readonly prefix: string;
  /**
   * Starts following run `traceId`, which must not have started yet (its first event is stored
   * after this resolves: start the run only then). The iterable gives each of its events once and in
   * order until its ending, or until `signal` aborts. A run that had events already is refused at its
   * first message with `LOG_SEQUENCE_GAP`: follow it with the event store's `follow`.
   */
  watch(traceId: string, options?: { readonly signal?: AbortSignal }): Promise<AsyncIterable<AgentEvent>>;
  /** Ends every follow (their iterables end) and deletes the consumer. */
  close(): Promise<void>;
}

/** What a follower is handed: the messages of its run, in the stream's order, or the end. */
type Delivery = { readonly data: Uint8Array } | { readonly failure: RedflowError } | { readonly closed: true };

interface Follower {
  readonly queue: Delivery[];
  wake?: () => void;
}

/**
 * A {@link SharedRunFollow}: one nats.js ordered consumer over every log subject of the prefix
 * (`<prefix>.log.>`), started at the stream's end when the first run is watched, whose messages
 * are handed to the watchers of their runs. A client starting many runs at once (a batch, a load
 * test) then costs the server one consumer instead of one per run: on nats-server 2.9 a thousand
 * per-run consumers take more of its CPU than the runs' own writes. The consumer sees every run
 * of the prefix, its client's or not, so it pays where this client's runs are most of the traffic;
 * a client following a few runs on a busy cluster is better served by the event store's `follow`.
 *
 * The ordered consumer gives each message once, in the stream's order, recreated past the last one
 * it gave after a gap or a reconnection; one nats.js gives up while the connection is down is
 * replaced from the same place. Each run's messages are checked as the store's `follow` checks them
 * (schema, run, seq from 1, a step the run could take); a problem ends that run's follow with its
 * code, not the others'. A connection closed for good ends them all with `LOG_STORE_UNAVAILABLE`.
 *
 * @example
 * ```ts
 * const follow = createSharedRunFollow({ nc });
 * const runs = await Promise.all(inputs.map((input) => startRemoteRun({ nc, input, follow })));
 * const results = await Promise.all(runs.map((run) => run.result));
 * await follow.close();
 * ```
 */
export function createSharedRunFollow(options: SharedRunFollowOptions): SharedRunFollow {
  const prefix = options.prefix ?? 'redflow';
  const stream = Storage.traceStream(prefix);
  const logSubjects = `${prefix}.log.`;
  const js: JetStreamClient = jetstream(options.nc);
  const followers = new Map<string, Follower>();
  /** Resolves once the consumer's start is fixed; each arming is its own object, so a stale loop cannot clear a newer one. */
  let armed: { readonly ready: Promise<void> } | undefined;
  let messages: ConsumerMessages | undefined;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const deliver = (follower: Follower, delivery: Delivery) => {
    follower.queue.push(delivery);
    follower.wake?.();
  };
  const failAll = (failure: RedflowError) => {
    for (const follower of followers.values()) deliver(follower, { failure });
    followers.clear();
  };

  /**
   * Runs a consumer from `lastStreamSeq + 1` until nobody follows or the connection is gone,
   * replacing lost ones after the last message handed out.
   */
  const consumeLoop = async (lastStreamSeq: number) => {
    for (let idle = 0; ; ) {
      const before = lastStreamSeq;
      const consumer = await orderedConsumer(js, stream, { filter_subjects: Subject.allLogs(prefix), opt_start_seq: lastStreamSeq + 1 });
      const current = await consumer.consume({ max_messages: PULL_MESSAGES });
      messages = current;
      let reconnected = false;
      // Messages handed to the dropped connection are behind the consumer: a new one from the last given.
      const stopWatching = watchReconnects(options.nc, () => {
        reconnected = true;
        current.stop();
      });
      try {
        for await (const message of current) {
          // Stopped (idle, closed): what nats.js still holds is for nobody.
          if (messages !== current) break;
          lastStreamSeq = message.seq;
          const traceId = message.subject.startsWith(logSubjects) ? message.subject.slice(logSubjects.length).split('.', 1)[0] : undefined;
          const follower = traceId === undefined ? undefined : followers.get(traceId);
          if (follower !== undefined) deliver(follower, { data: message.data });
        }
      } finally {
        stopWatching();
        current.stop();
        void consumer.delete().catch(() => undefined);
      }
      if (messages !== current || closed || options.nc.isClosed()) return;
      if (reconnected) continue;
      // nats.js gave the consumer up (the connection was down too long): a new one from the same place.
      idle = lastStreamSeq === before ? idle + 1 : 0;
      if (idle > MAX_IDLE_RESTARTS) throw new Error('the consumer could not be kept');
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** idle)));
    }
  };

  /** Fixes where the consumer starts (the stream's end) and runs it in the background. */
  const arm = (): { readonly ready: Promise<void> } => {
    const mine = {
      ready: (async () => {
        const info = await (await jetstreamManager(options.nc)).streams.info(stream);
        void consumeLoop(info.state.last_seq).then(
          () => {
            if (armed === mine) armed = undefined;
            if (closed || options.nc.isClosed()) failAll(unavailable('the connection closed'));
          },
          (error: unknown) => {
            if (armed === mine) armed = undefined;
            failAll(unavailable(error instanceof Error ? error.message : String(error), error));
          },
        );
      })(),
    };
    mine.ready.catch(() => {
      if (armed === mine) armed = undefined;
    });
    return mine;
  };

  const release = (traceId: string, follower: Follower) => {
    if (followers.get(traceId) === follower) followers.delete(traceId);
    if (followers.size > 0 || idleTimer !== undefined) return;
    idleTimer = setTimeout(() => {
      idleTimer = undefined;
      if (followers.size > 0) return;
      // The next watcher arms a new consumer at the stream's end; this one's loop ends.
      armed = undefined;
      const current = messages;
      messages = undefined;
      current?.stop();
    }, IDLE_CLOSE_MS);
    idleTimer.unref?.();
  };

  return {
    prefix,
    async watch(traceId, watchOptions = {}) {
      if (!isValidTraceId(traceId)) {
        throw new RedflowError(errorInfo(ErrorCode.LOG_NOT_FOUND, `${JSON.stringify(String(traceId).slice(0, 130))} is not a trace id`, { hint: 'a trace id is 1 to 128 letters, digits, _ and -' }));
      }
      if (closed) throw unavailable('the shared follow is closed');
      if (followers.has(traceId)) {
        throw new RedflowError(errorInfo(ErrorCode.RUN_TRACE_ID_TAKEN, `run ${traceId} is watched already by this shared follow`, { hint: 'watch each new run once' }));
      }
      const follower: Follower = { queue: [] };
      followers.set(traceId, follower);
      if (idleTimer !== undefined) {
        clearTimeout(idleTimer);
        idleTimer = undefined;
      }
      try {
        await (armed ??= arm()).ready;
      } catch (error) {
        release(traceId, follower);
        throw unavailable(`cannot follow run ${traceId}`, error);
      }
      return runEvents(traceId, follower, watchOptions.signal, () => release(traceId, follower));
    },
    async close() {
      closed = true;
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      for (const follower of followers.values()) deliver(follower, { closed: true });
      followers.clear();
      const current = messages;
      messages = undefined;
      current?.stop();
    },
  };
}

/** Run `traceId`'s events from the deliveries of its follower, checked, until its ending. */
async function* runEvents(traceId: string, follower: Follower, signal: AbortSignal | undefined, release: () => void): AsyncGenerator<AgentEvent> {
  const stopped = () => signal?.aborted === true;
  const wakeOnAbort = () => follower.wake?.();
  signal?.addEventListener('abort', wakeOnAbort, { once: true });
  const read = createRunMessageReader(traceId);
  try {
    while (!stopped()) {
      const delivery = follower.queue.shift();
      if (delivery === undefined) {
        await new Promise<void>((resolve) => (follower.wake = resolve));
        follower.wake = undefined;
        continue;
      }
      if ('closed' in delivery) return;
      if ('failure' in delivery) throw delivery.failure;
      for (const event of read(delivery.data)) {
        yield event;
        if (isTerminal(event) || stopped()) return;
      }
    }
  } finally {
    signal?.removeEventListener('abort', wakeOnAbort);
    release();
  }
}

/** The store's failure, said as the end of the follow of every run. */
function unavailable(message: string, cause?: unknown): RedflowError {
  return storeUnavailable(`stopped following runs: ${message}`, cause);
}
