import type { NatsConnection } from '@nats-io/transport-node';
import type { AgentEnvelope, ParentCall, RunOutcome } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../../errors.js';
import { DEFAULT_SUBJECT_PREFIX, Storage, Subject } from '../../actors/subjects.js';
import { createNatsTransport } from '../natsTransport.js';
import type { Reply } from '../../actors/transport.js';
import { followJetStreamRun } from '../jetstream/followRun.js';
import type { SharedRunFollow } from '../jetstream/sharedRunFollow.js';
import type { AgentEvent } from '../../events/eventTypes.js';
import { fold } from '../../events/evolve.js';
import { logStatus } from '../../events/resumePoint.js';
import { randomIds } from '../../runtime/ids.js';
import type { RunStartReply, RunStartRequest } from './coreWorker.js';
import { readRunStart } from './runLogExists.js';
import { watchReconnects } from '../reconnects.js';
import { noCoreWorkerHint } from './coreWorkerPresence.js';

/** Options of {@link startRemoteRun}. */
export interface RemoteRunOptions {
  readonly nc: NatsConnection;
  readonly input: unknown;
  readonly prefix?: string;
  readonly traceId?: string;
  readonly conversationId?: string;
  /** The flow the client means; the core workers refuse a run of another flow. */
  readonly flowId?: string;
  /** The run's timeout in ms (default: the core worker's). */
  readonly timeoutMs?: number;
  /** Called with each event of the run as it is stored, in order, each once. */
  readonly onEvent?: (event: AgentEvent) => void;
  /**
   * How long to wait for a core worker to take the run (default 10 s). A start refused for now
   * (`LOG_STORE_UNAVAILABLE` while the cluster elects a leader, a worker shutting down) is asked
   * again within it, with pauses from 100 ms doubling to 1 s; the last refusal is thrown.
   */
  readonly startTimeoutMs?: number;
  /** The call of another run that starts this one as its subagent (recorded in `run.started`). */
  readonly parent?: ParentCall;
  /** Stops following once aborted, as `detach` does (it may abort while the start is asked for). */
  readonly signal?: AbortSignal;
  /**
   * Follows the run through this shared follow's one consumer instead of a consumer of its own: for
   * a client starting many runs at once (see {@link createSharedRunFollow}). Its prefix must be the run's.
   */
  readonly follow?: SharedRunFollow;
}

/** A run started on the cluster. */
export interface RemoteRun {
  readonly traceId: string;
  /** Resolves with the outcome and the envelope (the fold of the run's stored log) once it ends. */
  readonly result: Promise<{ readonly outcome: RunOutcome; readonly envelope: AgentEnvelope }>;
  /** Stops listening; the run goes on on the cluster. */
  detach(): void;
}

/**
 * Asks the cluster's core workers to start a run and follows it in the trace stream (the JetStream
 * store's follow: an ordered consumer over the run's subjects), so `onEvent` sees each stored
 * event once and in order, and `result` is the fold of exactly the events stored. The run does not
 * depend on this client: if the client goes away, the run goes on. A core worker answers the start
 * once the run's first event is stored; a start refused for now is asked again within
 * `startTimeoutMs`. When no answer comes (`TRANSPORT_TIMEOUT`), the run
 * started only if the stream holds that first event, with this start's input and caller: then it is
 * followed (its worker died after storing it, and another takes it over), otherwise the timeout is
 * thrown and nothing runs.
 *
 * `result` rejects with `RUN_STOPPED` if the run's log ends otherwise than with its ending (it
 * cannot: it waits for the ending), and with `LOG_STORE_UNAVAILABLE` when the connection closes
 * before the run ends; it never settles once `detach` is called (or `options.signal` aborts).
 *
 * @example
 * ```ts
 * const run = await startRemoteRun({ nc, input: 'Where is order A-1001?', onEvent: print });
 * const { outcome } = await run.result;
 * ```
 */
export async function startRemoteRun(options: RemoteRunOptions): Promise<RemoteRun> {
  const prefix = options.prefix ?? DEFAULT_SUBJECT_PREFIX;
  const traceId = options.traceId ?? randomIds.traceId();
  const detached = new AbortController();
  const following = options.signal === undefined ? detached.signal : AbortSignal.any([detached.signal, options.signal]);
  // Followed from the first event, while the start is asked for: the stream keeps the run's
  // events, so none is missed whenever the consumer begins, and it is ready when they come.
  if (options.follow !== undefined && options.follow.prefix !== prefix) {
    throw new RedflowError(
      errorInfo(ErrorCode.SUBJECT_PREFIX_INVALID, `the shared follow is for prefix "${options.follow.prefix}", the run for "${prefix}"`, { hint: 'create the shared follow with the prefix of the runs it follows' }),
    );
  }
  // With a shared follow, its consumer's start is fixed before the run is asked for, so the run's
  // first event comes after it.
  const source = options.follow !== undefined ? await options.follow.watch(traceId, { signal: following }) : followJetStreamRun(options.nc, Storage.traceStream(prefix), prefix, traceId, 0, { signal: following });
  const result = followToEnd(source, traceId, following, options.onEvent);

  const transport = createNatsTransport(options.nc);
  const request: RunStartRequest = {
    input: options.input,
    traceId,
    ...(options.conversationId !== undefined && { conversationId: options.conversationId }),
    ...(options.flowId !== undefined && { flowId: options.flowId }),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.parent !== undefined && { parent: options.parent }),
  };
  let reply: Reply<RunStartReply> | 'found';
  try {
    reply = await askToStart(options.nc, transport, prefix, request, options.startTimeoutMs ?? 10_000, following);
  } catch (error) {
    detached.abort();
    throw error;
  } finally {
    await transport.close();
  }
  // No core worker answered, but the stream holds the run's start as asked: its worker stored it
  // and died before answering (another takes it over), or its answer was lost. Followed.
  if (reply === 'found') return { traceId, result, detach: () => detached.abort() };
  if (!reply.ok) {
    detached.abort();
    const hint =
      reply.error.code === ErrorCode.TRANSPORT_NO_RESPONDER
        ? noCoreWorkerHint(prefix)
        : reply.error.hint;
    throw new RedflowError({ ...reply.error, ...(hint !== undefined && { hint }) });
  }
  return {
    traceId,
    result,
    detach: () => detached.abort(),
  };
}

/** The first pause before a start refused for now is asked again; it doubles up to a second. */
const FIRST_RETRY_MS = 100;
const LONGEST_RETRY_MS = 1000;

/**
 * A refusal a later attempt may get past: a core worker that cannot reach the trace stream or the
 * run buckets (a leader election, `LOG_STORE_UNAVAILABLE`) or is shutting down. Not a timeout (the
 * deadline is spent) nor "no core worker" (none is running: saying so at once helps more).
 */
function worthAnotherTry(error: ErrorInfo): boolean {
  return error.retryable === true && error.code !== ErrorCode.TRANSPORT_TIMEOUT && error.code !== ErrorCode.TRANSPORT_NO_RESPONDER;
}

/**
 * Asks the core workers to start the run until one acknowledges it, a refusal is final, or
 * `withinMs` passes, pausing between attempts. `'found'` when the last answer leaves the run's
 * fate open (no answer; refused for now; its trace id taken after an earlier attempt) but the
 * stream holds the start as asked: an earlier attempt did start it.
 */
async function askToStart(
  nc: NatsConnection,
  transport: ReturnType<typeof createNatsTransport>,
  prefix: string,
  request: RunStartRequest,
  withinMs: number,
  signal: AbortSignal,
): Promise<Reply<RunStartReply> | 'found'> {
  const deadline = Date.now() + withinMs;
  let pause = FIRST_RETRY_MS;
  // A request waiting through a reconnect is published again (requestMux.ts): the first copy may
  // have started the run, whose answer was lost, and the copy is then told the trace id is taken.
  let sentTwice = false;
  const stopWatching = watchReconnects(nc, () => (sentTwice = true));
  try {
    for (let attempt = 1; ; attempt++) {
      const reply = await transport.request<RunStartRequest, RunStartReply>(Subject.runStart(prefix), request, { timeoutMs: Math.max(1, deadline - Date.now()) });
      if (reply.ok) return reply;
      const ours = reply.error.code === ErrorCode.RUN_TRACE_ID_TAKEN && (attempt > 1 || sentTwice);
      // Taken by an earlier copy of this start whose first event is not stored yet: asked again,
      // the answer is the run's start in the stream, or the trace id free again if it never ran.
      const again = (worthAnotherTry(reply.error) || ours) && !signal.aborted && Date.now() + pause < deadline;
      const open = reply.error.code === ErrorCode.TRANSPORT_TIMEOUT || ours || (worthAnotherTry(reply.error) && !again);
      if (open && (await startedAsAsked(nc, prefix, request.traceId ?? '', request).catch(() => false))) return 'found';
      if (!again) return reply;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, LONGEST_RETRY_MS);
    }
  } finally {
    stopWatching();
  }
}

/**
 * True when the trace stream holds run `traceId`'s start, and it is the start this client asked
 * for (the same input and caller): not another run that had taken the trace id before.
 */
async function startedAsAsked(nc: NatsConnection, prefix: string, traceId: string, request: RunStartRequest): Promise<boolean> {
  const started = await readRunStart(nc, prefix, traceId);
  if (started === undefined) return false;
  const sameParent = (started.data.parent?.idempotencyKey ?? null) === (request.parent?.idempotencyKey ?? null);
  return sameParent && JSON.stringify(started.data.input) === JSON.stringify(request.input);
}

/**
 * The outcome and envelope of a run followed in the trace stream: the fold of exactly the events
 * `source` yields, once the run's ending comes. Rejects with `RUN_STOPPED` when the events end
 * without it; never settles once `following` aborts (the caller no longer waits).
 *
 * @example
 * ```ts
 * const result = followToEnd(followJetStreamRun(nc, stream, prefix, traceId, 0), traceId, signal, print);
 * ```
 */
export function followToEnd(
  source: AsyncIterable<AgentEvent>,
  traceId: string,
  following: AbortSignal,
  onEvent?: (event: AgentEvent) => void,
): Promise<{ outcome: RunOutcome; envelope: AgentEnvelope }> {
  const events: AgentEvent[] = [];
  const result = new Promise<{ outcome: RunOutcome; envelope: AgentEnvelope }>((resolve, reject) => {
    void (async () => {
      for await (const event of source) {
        events.push(event);
        onEvent?.(event);
      }
      // Detached: the caller no longer waits for the result.
      if (following.aborted) return;
      const status = logStatus(events);
      if (status.kind !== 'finished') throw new RedflowError(errorInfo(ErrorCode.RUN_STOPPED, `run ${traceId} has not ended`));
      resolve({ outcome: status.outcome, envelope: fold(events) });
    })().catch(reject);
  });
  result.catch(() => undefined);
  return result;
}
