import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import { jsonLimitBreach } from '../validation/jsonValueLimits.js';
import { defaultAnswerLimits } from '../validation/validateModelAnswer.js';
import type { ConversationTurn } from './reactStepTypes.js';

/**
 * The first tool call of a history whose parameters break the limits a model's answer gets (64
 * levels of nesting, 1,000,000 characters of JSON). A call's parameters are written into the
 * session's log as they come (the model's decision, the call) and into the prompt, both
 * recursively: deeper data would overflow their stack. The schema cannot say how deep an object
 * may nest, so this is checked, with the same iterative measure the model's answers, a run's
 * input and a tool's reply get, before anything of the step is written. (A tool's observation
 * needs no refusal: past the limits it is recorded as the call's failure, as any tool's reply.)
 *
 * @returns a `REACT_STEP_HISTORY_INVALID` error (400) naming the turn, or `undefined`.
 * @example
 * ```ts
 * const problem = historyLimitProblem(request.conversation_history);
 * if (problem !== undefined) throw new ApiError(problem);
 * ```
 */
export function historyLimitProblem(history: readonly ConversationTurn[]): ErrorInfo | undefined {
  for (const [index, turn] of history.entries()) {
    if (turn.toolCall === undefined) continue;
    const breach = jsonLimitBreach(turn.toolCall.parameters, defaultAnswerLimits);
    if (breach === undefined) continue;
    const why = breach.kind === 'depth' ? `nest deeper than ${breach.maxDepth} levels` : `are longer than ${breach.maxChars} characters as JSON`;
    return errorInfo(ErrorCode.REACT_STEP_HISTORY_INVALID, `the parameters of the call to ${turn.toolCall.name} ${why}, which no model's answer could propose`, {
      path: `/conversation_history/${index}/toolCall/parameters`,
      hint: 'send the history as the last answer gave it (updated_conversation_history)',
    });
  }
  return undefined;
}
