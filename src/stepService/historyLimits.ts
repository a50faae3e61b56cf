import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import { jsonLimitBreach } from '../validation/jsonValueLimits.js';
import { defaultAnswerLimits } from '../validation/validateModelAnswer.js';
import type { ConversationTurn } from './reactStepTypes.js';

/**
 * The first part of a history that breaks the limits a model's answer gets (64 levels of
 * nesting, 1,000,000 characters of JSON), where no run could have recorded it so:
 *
 * - a tool call's `parameters`, written into the session's log as they come (the model's decision,
 *   the call) and into the prompt, both recursively: deeper data would overflow their stack;
 * - an earlier query's observation (`toolResult`), which the server gave back as its run recorded
 *   it: a result past the limits became the call's failure then, so one here was not sent so, and
 *   it would be echoed back in the answer, whose writing is recursive too.
 *
 * The schema cannot say how deep an object may nest, so this is checked, with the one iterative
 * measure the model's answers, a run's input and a tool's reply get, before anything of the step
 * is written. (The observations of the query the step continues need no refusal: a tool's output
 * past the limits is recorded as the call's failure, as any tool's reply, and given back so.)
 *
 * @param queryStart the index of the turn that asks the step's query: the turns before it are
 *   earlier queries'. The history's length when the step brings a new query.
 * @returns a `REACT_STEP_HISTORY_INVALID` error (400) naming the turn, or `undefined`.
 * @example
 * ```ts
 * const problem = historyLimitProblem(request.conversation_history, request.conversation_history.length);
 * if (problem !== undefined) throw new ApiError(problem);
 * ```
 */
export function historyLimitProblem(history: readonly ConversationTurn[], queryStart: number): ErrorInfo | undefined {
  for (const [index, turn] of history.entries()) {
    if (turn.toolCall !== undefined) {
      const problem = breachOf(turn.toolCall.parameters, `/conversation_history/${index}/toolCall/parameters`, `the parameters object of the call to ${turn.toolCall.name}`, 'which no model\'s answer could propose');
      if (problem !== undefined) return problem;
    }
    if (turn.toolResult !== undefined && index < queryStart) {
      const problem = breachOf(turn.toolResult, `/conversation_history/${index}/toolResult`, 'the result of an earlier query\'s observation', 'which its run would have recorded as the call\'s failure');
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

function breachOf(value: unknown, path: string, what: string, why: string): ErrorInfo | undefined {
  const breach = jsonLimitBreach(value, defaultAnswerLimits);
  if (breach === undefined) return undefined;
  const how = breach.kind === 'depth' ? `nests deeper than ${breach.maxDepth} levels` : `is longer than ${breach.maxChars} characters as JSON`;
  return errorInfo(ErrorCode.REACT_STEP_HISTORY_INVALID, `${what} ${how}, ${why}`, {
    path,
    hint: 'send the history as the last answer gave it (updated_conversation_history)',
  });
}
