import type { AgentEnvelope } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { RunWait, WaitAnswer } from '../events/pendingWait.js';
import { resumeRun } from '../runtime/runAgent.js';
import type { RunEnvironment, RunHandle, RunResult } from '../runtime/runSession.js';
import { isRunWaiting } from '../runtime/runWaitingError.js';
import { systemClock } from '../runtime/clock.js';
import { takeAnswer } from './takeAnswer.js';

/**
 * Options of {@link answerWaitingRun}: the run's environment (its log is read from `store`), which run, and the answer.
 *
 * @example
 * ```ts
 * const options: AnswerWaitingRunOptions = { ...environment, traceId, answer: { kind: 'approval', approved: true } };
 * const run = await answerWaitingRun(options);
 * ```
 */
export interface AnswerWaitingRunOptions extends RunEnvironment {
  readonly traceId: string;
  readonly answer: WaitAnswer;
}

/**
 * Answers a run that waits for an answer from outside, and runs it on: reads its log from
 * `store`, takes the answer through the run host ({@link takeAnswer}: it must fit the wait the log
 * ends in), resumes the run into its wait (recording `run.resumed`), and hands it the answer, which
 * the statechart records (`tool.approved`, `tool.denied`, `tool.completed`, `human.answered`, or the
 * wait's expiry). The run goes on until it ends or waits again; {@link settleRun} tells which.
 *
 * An answer past the wait's deadline is not taken: the run takes the wait's expiry instead and
 * ends blocked (`wait_expired`), and once it has, the call rejects with `WAIT_EXPIRED`, as
 * `redflow serve`'s answer routes refuse it (409) after ending the run so.
 *
 * Exactly one answer per wait within one store writer: the check and the resume read the same log,
 * and a second answer finds the wait answered (`WAIT_ALREADY_ANSWERED`). Between processes, the
 * store keeps a second writer out (a JSONL log's lock; on a cluster, the run's record).
 *
 * @throws RedflowError `LOG_NOT_FOUND` for an unknown run, the first problem of a damaged log,
 *   `RUN_ALREADY_FINISHED`, `RUN_NOT_WAITING`, `WAIT_ALREADY_ANSWERED`, `WAIT_ANSWER_MISMATCH`;
 *   `WAIT_EXPIRED` for an answer past the deadline (the run has then ended blocked).
 * @example
 * ```ts
 * const handle = await answerWaitingRun({ ...environment, traceId, answer: { kind: 'client', result: { ok: true, output: { temp: 21 } } } });
 * const settled = await settleRun(handle); // { kind: 'ended', … } or { kind: 'waiting', wait, … }
 * ```
 */
export async function answerWaitingRun(options: AnswerWaitingRunOptions): Promise<RunHandle> {
  const { events, problems } = await options.store.read(options.traceId);
  const [damage] = problems;
  if (damage) {
    throw new RedflowError(
      errorInfo(damage.code, `run ${options.traceId}: ${damage.message}`, { hint: 'the log is damaged and cannot be trusted to resume from' }),
    );
  }
  if (events.length === 0) throw new RedflowError(errorInfo(ErrorCode.LOG_NOT_FOUND, `no events for run ${options.traceId}`, { hint: 'check the trace id, and that `store` is the one the run was started with' }));
  const taken = await takeAnswer(options.traceId, options.answer, {
    read: async () => events,
    resume: (run) => resumeRun({ ...options, events: run.events, answer: run.answer }),
    now: () => (options.clock ?? systemClock).now(),
  });
  const { resumed, late } = taken as NonNullable<typeof taken>;
  if (late === undefined) return resumed;
  // Refused once the run has taken the expiry: its log says how it ended when the caller looks.
  await resumed.result.catch(() => undefined);
  throw late;
}

/**
 * How a run settled in this process: it ended, or it waits for an answer (parked in its log).
 *
 * @example
 * ```ts
 * const settled: RunSettlement = await settleRun(startRun({ ...environment, input: 'refund order A-1001' }));
 * if (settled.kind === 'waiting') console.log(settled.wait.kind, settled.wait.tool); // 'approval' 'refund'
 * ```
 */
export type RunSettlement =
  | ({ readonly kind: 'ended' } & RunResult)
  | {
      readonly kind: 'waiting';
      readonly traceId: string;
      readonly wait: RunWait;
      readonly envelope: AgentEnvelope;
      readonly lastSeq: number;
    };

/**
 * Waits for a run to end or to wait for an answer from outside, whichever comes first: a run
 * `result` that rejects with `RUN_WAITING` settles as `waiting`. Any other failure is thrown.
 *
 * @example
 * ```ts
 * const settled = await settleRun(startRun(options));
 * if (settled.kind === 'waiting') console.log(`${settled.wait.kind} for ${settled.wait.tool} until ${settled.wait.deadline}`);
 * ```
 */
export async function settleRun(handle: RunHandle): Promise<RunSettlement> {
  try {
    return { kind: 'ended', ...(await handle.result) };
  } catch (error) {
    if (!isRunWaiting(error)) throw error;
    return { kind: 'waiting', traceId: error.traceId, wait: error.wait, envelope: error.envelope, lastSeq: error.lastSeq };
  }
}
