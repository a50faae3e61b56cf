import type { AgentEnvelope } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { describeWait, type RunWait } from '../events/pendingWait.js';

/**
 * How a run that waits for an answer from outside settles in the process that ran it: the wait is
 * in its log (the last event began it), the process lets the run go, and `RunHandle.result`
 * rejects with this. Nothing is lost: the answer resumes the run from its log
 * (`answerWaitingRun`, `redflow approve|deny|tool-result`, the HTTP API).
 *
 * @example
 * ```ts
 * try { await run.result; } catch (error) { if (error instanceof RunWaitingError) console.log(error.wait.deadline); }
 * ```
 */
export class RunWaitingError extends RedflowError {
  constructor(
    readonly traceId: string,
    readonly wait: RunWait,
    /** The envelope at the wait: the fold of the log so far. */
    readonly envelope: AgentEnvelope,
    /** The seq of the log's last event. */
    readonly lastSeq: number,
  ) {
    super(
      errorInfo(ErrorCode.RUN_WAITING, waitingMessage(traceId, wait), {
        hint: HINTS[wait.kind](traceId),
      }),
    );
  }
}

/**
 * True when a run's `result` rejected because the run waits for an answer (it is parked in its log).
 *
 * @example
 * ```ts
 * try {
 *   await run.result;
 * } catch (error) {
 *   if (!isRunWaiting(error)) throw error;
 *   console.log(`run ${error.traceId} waits for ${error.wait.kind}`); // parked in its log: answer it later
 * }
 * ```
 */
export function isRunWaiting(error: unknown): error is RunWaitingError {
  return error instanceof RunWaitingError;
}

/** The command that answers each kind of wait. */
const HINTS: { readonly [K in RunWait['kind']]: (traceId: string) => string } = {
  approval: (traceId) => `approve or deny it: redflow approve|deny ${traceId}`,
  client: (traceId) => `post the tool's result: redflow tool-result ${traceId} --output <json>`,
  human: (traceId) => `answer the question: redflow answer ${traceId} --text <answer>`,
};

/** What a waiting run waits for, in words. */
export function waitingMessage(traceId: string, wait: RunWait): string {
  return `run ${traceId} waits for ${describeWait(wait)} (iteration ${wait.iteration}, key ${wait.idempotencyKey}) until ${wait.deadline}`;
}
