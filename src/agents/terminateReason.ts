import type { RunOutcome } from '../contracts/schema-types.js';

/**
 * Why a definition's run stopped, in the agent loop's usual words: `goal` (a final answer),
 * `partial` (a stop condition: an answer from what the run had), `max_turns` (no final answer
 * within `runConfig.maxTurns`), `escalated` / `info_requested` (the model asked a person, and no
 * answer came), `delegated` (handed to another agent), `timeout`, `aborted`, `error` (the model
 * failed, or its answer was invalid).
 */
export type TerminateReason = 'goal' | 'partial' | 'max_turns' | 'escalated' | 'info_requested' | 'delegated' | 'timeout' | 'aborted' | 'error';

/**
 * The {@link TerminateReason} of an outcome: read off its `reason` (the way the run got to its exit
 * state). A reason this function does not know yet is an `error`: new ways to end are added here.
 *
 * @example
 * ```ts
 * terminateReasonOf({ status: 'escalate', reason: 'iteration_limit' }); // 'max_turns'
 * ```
 */
export function terminateReasonOf(outcome: Pick<RunOutcome, 'status' | 'reason'>): TerminateReason {
  // Read as a string: the outcome's reasons grow, and an unknown one must not break the mapping.
  const reason: string = outcome.reason;
  switch (reason) {
    case 'final_answer':
      return 'goal';
    case 'confidence_threshold':
      return 'partial';
    // A budget ends a run with what it has when a tool ran (done_partial), else blocked.
    case 'budget_exhausted':
      return outcome.status === 'done_partial' ? 'partial' : 'error';
    case 'iteration_limit':
      return 'max_turns';
    case 'escalated':
      return 'escalated';
    case 'info_requested':
      return 'info_requested';
    case 'delegated':
      return 'delegated';
    case 'timeout':
    case 'wait_expired':
      return 'timeout';
    case 'aborted':
      return 'aborted';
    default:
      return 'error';
  }
}
