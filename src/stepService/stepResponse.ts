import type { AgentEnvelope, RunOutcome } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import type { Clock } from '../runtime/clock.js';
import { parseTextAction } from '../validation/actionSyntax.js';
import { looksLikeJson } from '../validation/validateTextAnswer.js';
import type { ConversationTurn, ReactStepRequest, ReactStepResponse } from './reactStepTypes.js';
import type { SessionPosition } from './sessionTurns.js';
import { asRecorded } from './sessionTurns.js';

// A step's answer: where its run stands after it (a proposed action, a reply, an error), told in the session's terms.

/** Model calls a session's query may make when the step does not say (`max_iterations_left`). */
export const DEFAULT_STEP_ITERATIONS = 5;

/** The step a response answers: its request, where it stands in the session, its run. */
export interface AnsweredStep {
  readonly request: ReactStepRequest;
  readonly position: SessionPosition;
  readonly traceId: string;
  readonly clock: Clock;
}

/** An error as a step's response carries it: code, message and hint, nothing internal. */
function stepError(error: ErrorInfo): NonNullable<ReactStepResponse['error']> {
  return { code: error.code, message: error.message, ...(error.hint !== undefined && { hint: error.hint }) };
}

/**
 * The answer of a step: where the run stands after it, told in the session's terms.
 *
 * @example
 * ```ts
 * const response = respond(step, envelope, (await store.read(traceId)).events, 0, lastAnswer);
 * response.status; // 'action_proposed', 'direct_response_provided' or 'error'
 * ```
 */
export function respond(
  step: AnsweredStep,
  envelope: AgentEnvelope,
  events: readonly AgentEvent[],
  known: number,
  liveAnswer: string | undefined,
): ReactStepResponse {
  const { request, position, traceId } = step;
  const calls = envelope.tools.history;
  const history: ConversationTurn[] = position.newQuery ? [...request.conversation_history] : asRecorded(request.conversation_history, calls);
  // The query was asked when its run began: its turn comes before the model's, even in a retry.
  const asked = events[0]?.type === 'run.started' ? events[0].time : new Date(step.clock.now()).toISOString();
  if (position.newQuery) history.push({ role: 'user', content: position.query, timestamp: asked });
  const answers = events.filter((event) => event.type === 'model.answered');
  const requested = events.filter((event) => event.type === 'tool.requested');
  for (let i = known; i < calls.length; i += 1) {
    const call = calls[i];
    if (call === undefined) continue;
    const at = requested[i];
    history.push({ role: 'assistant', content: '', toolCall: { name: call.tool, parameters: call.input as Record<string, unknown> }, ...(at !== undefined && { timestamp: at.time }) });
  }
  const limit = (events[0]?.type === 'run.started' ? events[0].data.agent.maxIterations : undefined) ?? DEFAULT_STEP_ITERATIONS;
  const remaining = Math.max(0, limit - envelope.state.iteration);
  const outcome: RunOutcome | undefined = envelope.observability.outcome;
  const lastText = liveAnswer ?? lastLoggedText(answers);
  const thought = liveAnswer === undefined ? null : thoughtOf(liveAnswer);
  const { usage } = envelope.observability;
  const base = { session_id: request.session_id, trace_id: traceId, thought, updated_conversation_history: history, iterations_remaining: remaining, ...(usage !== undefined && { usage }) };
  if (outcome === undefined) {
    const call = calls[calls.length - 1];
    if (call === undefined || call.status !== 'requested') {
      return { ...base, action_details: null, direct_response: null, status: 'error', error: errorInfo(ErrorCode.RUN_NOT_WAITING, `run ${traceId} is neither waiting for a tool nor ended`) };
    }
    const last = history[history.length - 1];
    if (last?.role === 'assistant' && thought !== null) history[history.length - 1] = { ...last, content: thought };
    return {
      ...base,
      action_details: { tool_name: call.tool, tool_args: call.input as Record<string, unknown>, raw_action_string: rawAction(lastText, call.tool, call.input) },
      direct_response: null,
      status: 'action_proposed',
    };
  }
  // A question for the user is what the step says: the user answers it with the next query.
  const said = outcome.question?.question ?? (outcome.status === 'done' || outcome.status === 'done_partial' ? outcome.answer : undefined);
  if (said !== undefined && said !== '') {
    const at = events[events.length - 1]?.time;
    history.push({ role: 'assistant', content: said, ...(at !== undefined && { timestamp: at }) });
    return { ...base, action_details: null, direct_response: said, status: 'direct_response_provided' };
  }
  if (outcome.handoff !== undefined) {
    const { agentId, task } = outcome.handoff;
    const error = errorInfo(ErrorCode.RUN_DELEGATED, `the model handed the task to agent ${agentId}: ${task}`, { hint: 'this service runs one agent: give that task to the agent named, or ask again' });
    return { ...base, action_details: null, direct_response: null, status: 'error', error: stepError(error) };
  }
  const error = (outcome.error as ErrorInfo | undefined) ?? errorInfo(ErrorCode.ITERATION_OVERFLOW, `the run ended ${outcome.status} without an answer`);
  return { ...base, action_details: null, direct_response: null, status: 'error', error: stepError(error) };
}

function lastLoggedText(answers: readonly AgentEvent[]): string | undefined {
  const last = answers[answers.length - 1];
  return last?.type === 'model.answered' ? last.data.text : undefined;
}

/** The model's thought in its answer, JSON or text form. */
function thoughtOf(text: string): string | null {
  if (looksLikeJson(text)) {
    try {
      const parsed = JSON.parse(text) as { thought?: unknown };
      return typeof parsed.thought === 'string' ? parsed.thought : null;
    } catch {
      return null;
    }
  }
  return parseTextAction(text).thought ?? null;
}

/** The action as the model wrote it: its `Action:` text, or its JSON answer. */
function rawAction(text: string | undefined, tool: string, input: unknown): string {
  if (text === undefined || text === '') return JSON.stringify({ action: 'tool', tool, input });
  if (looksLikeJson(text)) return text.trim();
  const read = parseTextAction(text);
  return read.kind === 'tool' ? read.raw : text.trim();
}

/**
 * The answer to a query its client gave no iteration (`max_iterations_left: 0`), or whose session spent its budget.
 *
 * @example
 * ```ts
 * if (iterationLimit(request, position, undefined) === 0) return noIterationLeft(step);
 * ```
 */
export function noIterationLeft(step: AnsweredStep, spent?: ErrorInfo): ReactStepResponse {
  const { request, position } = step;
  const asked: ConversationTurn[] = position.newQuery ? [{ role: 'user', content: position.query, timestamp: new Date(step.clock.now()).toISOString() }] : [];
  const error =
    spent ??
    errorInfo(ErrorCode.ITERATION_OVERFLOW, 'the step has no iteration left (max_iterations_left is 0): the model was not asked', {
      hint: 'send the query with max_iterations_left of 1 or more',
    });
  return {
    session_id: request.session_id,
    thought: null,
    action_details: null,
    direct_response: null,
    updated_conversation_history: [...request.conversation_history, ...asked],
    iterations_remaining: 0,
    status: 'error',
    error: stepError(error),
  };
}
