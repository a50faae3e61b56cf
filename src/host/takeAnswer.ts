import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { isPastDeadline, judgeAnswer, type RunWait, type WaitAnswer } from '../events/pendingWait.js';

/** What a late answer's refusal suggests unless its host says more. */
const DEFAULT_LATE_HINT = "answer before the wait's deadline, or raise the agent's waitTimeoutMs";

/**
 * Who may change a run's log (a port of the run host). In one process nobody else does, and
 * there is none; on a cluster the run's lease decides (the core worker's implementation).
 */
export interface RunOwnership {
  /**
   * Takes the run to resume it with `answer` (`events`: its log as judged before): one taker wins. Resolves with the log as it is now
   * that no one else may change it; rejects (`WAIT_ALREADY_ANSWERED`) when another holds the run;
   * a `LOG_CONCURRENT_WRITER` it rejects with is taken to mean the same.
   */
  take(traceId: string, answer: WaitAnswer, events: readonly AgentEvent[]): Promise<{ readonly events: readonly AgentEvent[]; readonly timeoutMs?: number }>;
  /** Lets the run go again: the answer no longer fitted the log read once it was taken. */
  release(traceId: string, events: readonly AgentEvent[]): Promise<void>;
}

/** A run to resume with the answer to its wait, as {@link takeAnswer} hands it to its host. */
export interface AnsweredRun {
  readonly traceId: string;
  /** The log the answer was judged against (read again, once taken, when there is an ownership). */
  readonly events: readonly AgentEvent[];
  /** The answer the run takes: the one given, or the wait's expiry when it came too late. */
  readonly answer: WaitAnswer;
  /** The run's timeout as its owner kept it (a cluster's run record), if any. */
  readonly timeoutMs?: number;
}

/** What {@link takeAnswer} works with: the run's log, who owns it, and how its host resumes it. */
export interface AnswerPorts<R> {
  /** The run's log, or `undefined` when there is no such run. */
  readonly read: (traceId: string) => Promise<readonly AgentEvent[] | undefined>;
  readonly ownership?: RunOwnership;
  /** Resumes the run with its answer (its host opens the log and serves the actors). */
  readonly resume: (run: AnsweredRun) => R | Promise<R>;
  /** Now, in ms (default `Date.now`): past a wait's deadline an answer is too late. */
  readonly now?: () => number;
}

/** How an answer was taken: what resuming gave, and the refusal to report when it came too late. */
export interface TakenAnswer<R> {
  readonly resumed: R;
  /** The wait the answer was for. */
  readonly wait: RunWait;
  /** `WAIT_EXPIRED` when the answer came past the wait's deadline: the run took the expiry instead and ends blocked. */
  readonly late?: RedflowError;
}

/**
 * Answers a run that waits: the one implementation every host goes through. Judges the answer
 * against the log (`judgeAnswer`: `RUN_ALREADY_FINISHED`, `RUN_NOT_WAITING`,
 * `WAIT_ALREADY_ANSWERED`, `WAIT_ANSWER_MISMATCH`), turns one past the wait's deadline into the
 * wait's expiry, takes the run when there is an ownership (and judges again, since the log may
 * have moved before it was taken), and resumes it. `undefined` when there is no such run.
 *
 * @example
 * ```ts
 * const taken = await takeAnswer(traceId, { kind: 'approval', approved: true }, { read, resume });
 * if (taken?.late) throw taken.late; // the run ends blocked with WAIT_EXPIRED
 * ```
 */
export async function takeAnswer<R>(traceId: string, answer: WaitAnswer, ports: AnswerPorts<R>, hint = DEFAULT_LATE_HINT): Promise<TakenAnswer<R> | undefined> {
  const events = await ports.read(traceId);
  if (events === undefined) return undefined;
  const verdict = judgeAnswer(events, answer);
  if (!verdict.ok) throw new RedflowError(verdict.error);
  // Past its deadline the wait takes no answer: it expires (no timer had come round yet).
  const late = answer.kind !== 'expire' && isPastDeadline(verdict.wait, (ports.now ?? Date.now)());
  const taken: WaitAnswer = late ? { kind: 'expire' } : answer;
  let run: AnsweredRun = { traceId, events, answer: taken };
  if (ports.ownership !== undefined) {
    const owned = await ports.ownership.take(traceId, taken, events).catch((error: unknown) => {
      throw heldByAnother(error, traceId);
    });
    // Ours now: the log cannot move any more; judged again, since it may have moved before.
    const again = judgeAnswer(owned.events, taken);
    if (!again.ok) {
      await ports.ownership.release(traceId, owned.events);
      throw new RedflowError(again.error);
    }
    run = { ...run, events: owned.events, ...(owned.timeoutMs !== undefined && { timeoutMs: owned.timeoutMs }) };
  }
  const resumed = await ports.resume(run);
  if (!late) return { resumed, wait: verdict.wait };
  return { resumed, wait: verdict.wait, late: expiredError(traceId, verdict.wait, hint) };
}

/**
 * A log locked by a live process, met while taking the run: that process holds it (it took an
 * answer first, or runs the run on), so this answer lost the race, as a second answer over HTTP
 * does. One translation for every host that takes a run by opening its log (a flow's run, an agent
 * definition's). Any other error stays as it is.
 */
function heldByAnother(error: unknown, traceId: string): unknown {
  if (!(error instanceof RedflowError) || error.code !== ErrorCode.LOG_CONCURRENT_WRITER) return error;
  return new RedflowError(
    errorInfo(ErrorCode.WAIT_ALREADY_ANSWERED, `run ${traceId}: another process holds its log (${error.message}); a wait takes one answer`, {
      hint: `\`redflow replay\` of the run's log shows what the run did with the answer, and what it waits for now`,
    }),
    { cause: error },
  );
}

/**
 * The refusal (`WAIT_EXPIRED`) of an answer that comes past the deadline of the wait the log ends
 * in, or `undefined` when it is in time or answers no wait: {@link takeAnswer}'s judgement of
 * lateness, for a host that hands the answer on to one that does not report it.
 *
 * @example
 * ```ts
 * const late = lateAnswerRefusal(events, { kind: 'approval', approved: true }, Date.now());
 * ```
 */
export function lateAnswerRefusal(events: readonly AgentEvent[], answer: WaitAnswer, nowMs: number, hint = DEFAULT_LATE_HINT): RedflowError | undefined {
  const verdict = judgeAnswer(events, answer);
  if (!verdict.ok || answer.kind === 'expire' || !isPastDeadline(verdict.wait, nowMs)) return undefined;
  return expiredError(events[0]?.traceId ?? '', verdict.wait, hint);
}

function expiredError(traceId: string, wait: RunWait, hint: string): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.WAIT_EXPIRED, `run ${traceId} waited until ${wait.deadline}: the answer came too late, and the run ends blocked (wait_expired)`, { hint }),
  );
}

/**
 * The refusal of an answer that does not fit the run's log (`judgeAnswer`'s error), if it does not:
 * the run host's word on an answer to a run under way, whose log it does not resume from.
 *
 * @example
 * ```ts
 * const refused = refusalOf(events, { kind: 'approval', approved: true });
 * if (refused) throw refused; // RUN_NOT_WAITING, WAIT_ANSWER_MISMATCH, …
 * ```
 */
export function refusalOf(events: readonly AgentEvent[], answer: WaitAnswer): RedflowError | undefined {
  const verdict = judgeAnswer(events, answer);
  return verdict.ok ? undefined : new RedflowError(verdict.error);
}

/**
 * The answer a host took before it died (a cluster keeps it in the run's record), if the run still
 * has to take it: `undefined` once its log has it, or when it no longer fits (the run then parks
 * again). Taken already, it is not judged for lateness again: resuming turns it into the expiry if
 * the wait's deadline has passed since.
 *
 * @example
 * ```ts
 * const answer = answerStillDue(events, record.answer);
 * resumeRun({ ...environment, events, ...(answer !== undefined && { answer }) });
 * ```
 */
export function answerStillDue(events: readonly AgentEvent[], answer: WaitAnswer | undefined): WaitAnswer | undefined {
  return answer !== undefined && judgeAnswer(events, answer).ok ? answer : undefined;
}
