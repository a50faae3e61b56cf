import { jetstream, type Consumer, type JetStreamClient, type OrderedConsumerOptions } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { watchReconnects } from '../reconnects.js';
import { Subject } from '../../actors/subjects.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import type { FollowOptions } from '../../events/eventStore.js';
import { isTerminal, type AgentEvent } from '../../events/eventTypes.js';
import { checkFollowCursor } from '../../events/follow.js';
import { isValidTraceId } from '../../runtime/ids.js';
import { createRunMessageReader } from './runMessage.js';
import { storeUnavailable } from './storeUnavailable.js';

/** Messages asked for at once: a run's log comes in a few pulls, and a live run's next message as soon as it is stored. */
const PULL_MESSAGES = 256;
/**
 * The follow's JetStream API timeout, above nats.js's 5 s: after a kill -9 of the stream's leader
 * (three servers, 2.9.10), follows asking every 5 s went unanswered for up to 60 s, while follows
 * asking every 15 s were all answered at their first or second asking (ended 15-33 s after the kill).
 */
const API_TIMEOUT_MS = 15_000;
/** How many new consumers in a row may end without an event before the follow gives up. */
const MAX_IDLE_RESTARTS = 5;
/** How long making the consumer keeps asking through JetStream API timeouts. */
const CREATE_PATIENCE_MS = 30_000;
/**
 * How long a follow waits, with the connection open, for a stream that does not answer before it
 * gives up with `LOG_STORE_UNAVAILABLE`. A follow waits for the run's ending anyway, and the run goes
 * on through a leader election: a consumer creation sent during one is never answered, and is asked
 * again once {@link API_TIMEOUT_MS} has passed.
 */
const FOLLOW_PATIENCE_MS = 120_000;

/**
 * Follows run `traceId` in the trace stream (see `EventStore.follow`) through nats.js's ordered
 * consumer over the run's subjects: the library recreates the consumer past the last message it
 * delivered whenever one goes missing (a sequence gap, missed heartbeats, a reconnection), so the
 * messages come each once and in the stream's order, which is the run's, with no gap filling of
 * our own. After a reconnection the follow starts a new consumer from the last event it gave
 * (see {@link watchReconnects}: messages handed to the dead connection would otherwise be missed
 * until the run's next one). Every message of the run is read from the first (an event's seq is
 * not its stream sequence): those up to `afterSeq` are checked and passed over.
 *
 * Each message is checked as `read` checks it (schema, run, seq, a step the run could take); one
 * that fails ends the follow with the problem's code. A stream that does not answer (a leader
 * election) is asked again, for up to 2 minutes without an answer. A connection closed under it ends it with
 * `LOG_STORE_UNAVAILABLE`, a trace id that is not one (it would be a wildcard in the filter) with
 * `LOG_NOT_FOUND`. The ephemeral consumer is deleted when the follow ends.
 */
export async function* followJetStreamRun(nc: NatsConnection, stream: string, prefix: string, traceId: string, afterSeq: number, options: FollowOptions = {}): AsyncGenerator<AgentEvent> {
  checkFollowCursor(traceId, afterSeq);
  // One subject token: anything else would filter other runs' subjects in (`>`, `*`, a dot).
  if (!isValidTraceId(traceId)) {
    throw new RedflowError(
      errorInfo(ErrorCode.LOG_NOT_FOUND, `${JSON.stringify(String(traceId).slice(0, 130))} is not a trace id: no run in stream ${stream} has it`, {
        hint: 'a trace id is 1 to 128 letters, digits, _ and -',
      }),
    );
  }
  const { signal } = options;
  const stopped = () => signal?.aborted === true;
  const js = jetstream(nc, { timeout: API_TIMEOUT_MS });
  let yielded = afterSeq;
  let answeredAt = Date.now();
  for (let idle = 0; !stopped(); ) {
    const before = yielded;
    const once = followOnce(nc, js, stream, prefix, traceId, yielded, signal);
    let step: IteratorResult<AgentEvent, 'ended' | 'lost' | 'reconnected' | 'unanswered'>;
    try {
      while (!(step = await once.next()).done) {
        yielded = step.value.seq;
        answeredAt = Date.now();
        yield step.value;
      }
    } catch (error) {
      if (!timedOut(error) || nc.isClosed() || Date.now() - answeredAt > FOLLOW_PATIENCE_MS) throw error;
      step = { done: true, value: 'unanswered' };
    } finally {
      // Broken out of, or failed: its consumer goes too.
      await once.return('ended');
    }
    if (step.value === 'ended' || stopped()) return;
    if (step.value === 'reconnected') continue;
    if (step.value === 'unanswered') {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    // nats.js's ordered consumer ended without the run's ending: it gives up a consumer it could
    // not recreate while the connection was down. A new one goes on from the last event yielded;
    // a connection closed for good fails its creation, and so does this follow.
    idle = yielded === before ? idle + 1 : 0;
    if (idle > MAX_IDLE_RESTARTS) throw storeUnavailable(`stopped following run ${traceId}`, new Error('the connection closed'));
    await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** idle)));
  }
}

/**
 * One ordered consumer's follow of the run: its events after `afterSeq`, until its ending or
 * `signal` ('ended'), until the connection comes back after a drop ('reconnected'), or until
 * nats.js ends the consumer ('lost').
 */
async function* followOnce(
  nc: NatsConnection,
  js: JetStreamClient,
  stream: string,
  prefix: string,
  traceId: string,
  afterSeq: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<AgentEvent, 'ended' | 'lost' | 'reconnected'> {
  const stopped = () => signal?.aborted === true;
  let consumer;
  let messages;
  try {
    consumer = await orderedConsumer(js, stream, { filter_subjects: Subject.runLog(prefix, traceId) }, signal);
    messages = await consumer.consume({ max_messages: PULL_MESSAGES });
  } catch (error) {
    await consumer?.delete().catch(() => undefined);
    throw storeUnavailable(`cannot follow run ${traceId}`, error);
  }
  const stop = () => messages.stop();
  signal?.addEventListener('abort', stop, { once: true });
  let reconnected = false;
  const stopWatching = watchReconnects(nc, () => {
    reconnected = true;
    messages.stop();
  });
  const read = createRunMessageReader(traceId);
  try {
    for await (const message of messages) {
      for (const event of read(message.data)) {
        if (event.seq > afterSeq) yield event;
        if (stopped() || isTerminal(event)) return 'ended';
      }
    }
  } catch (error) {
    throw storeUnavailable(`stopped following run ${traceId}`, error);
  } finally {
    signal?.removeEventListener('abort', stop);
    stopWatching();
    messages.stop();
    // Not waited for: with the server out of reach it would hold the caller up to the API timeout
    // (the server drops an idle ordered consumer by itself).
    void consumer.delete().catch(() => undefined);
  }
  return stopped() ? 'ended' : reconnected ? 'reconnected' : 'lost';
}

/**
 * nats.js's ordered consumer of `options` (its filter, where it starts). Asked again when the JetStream API answers with a
 * timeout: a thousand runs started at once ask for a thousand consumers (and the stream's info,
 * which nats.js asks before each) in one burst, and some of those requests time out on a busy
 * server. nats.js retries the creations of an ordered consumer it resets, not the first one.
 */
export async function orderedConsumer(js: JetStreamClient, stream: string, options: Partial<OrderedConsumerOptions>, signal?: AbortSignal): Promise<Consumer> {
  const deadline = Date.now() + CREATE_PATIENCE_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await js.consumers.get(stream, options);
    } catch (error) {
      if (!timedOut(error) || Date.now() >= deadline || signal?.aborted === true) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
    }
  }
}

/** A JetStream API request that got no answer in time (by name: nats.js's class may be loaded twice). */
function timedOut(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) if (cause.name === 'TimeoutError') return true;
  return false;
}

