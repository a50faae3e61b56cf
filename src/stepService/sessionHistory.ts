import type { AgentCoreReactConfig, HistoryMessage, ToolSpec } from '../contracts/schema-types.js';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { createRunPathCheck } from '../events/runPath.js';
import { waitTimeoutOf } from '../events/waits.js';
import type { ToolResult } from '../actors/tool.js';
import type { Clock } from '../runtime/clock.js';
import { limitToolResult } from '../runtime/dataLimits.js';
import { redactReply } from '../runtime/redactReply.js';
import { buildSystemPrompt } from '../machines/prompt.js';
import type { ConversationTurn } from './reactStepTypes.js';
import { observationOf, type ClientObservation, type SessionPosition } from './sessionTurns.js';

// A session's conversation history as a run sees it: the model's messages, the client's results,
// and, when the server has no log for the session, the log its run would have written.

/**
 * Earlier turns as the model is shown them: observations as the user's messages.
 *
 * @example
 * ```ts
 * historyMessages([{ role: 'user', content: 'Hi' }]); // [{ role: 'user', content: 'Hi' }]
 * ```
 */
export function historyMessages(turns: readonly ConversationTurn[]): HistoryMessage[] {
  return turns.map((turn) => {
    if (turn.role === 'tool_observation') return { role: 'user', content: `Observation${turn.toolCall ? ` from ${turn.toolCall.name}` : ''}:\n${observationText(turn)}` };
    if (turn.role === 'assistant' && turn.toolCall !== undefined) {
      return { role: 'assistant', content: JSON.stringify({ action: 'tool', tool: turn.toolCall.name, input: turn.toolCall.parameters }) };
    }
    return { role: turn.role === 'assistant' ? 'assistant' : 'user', content: turn.content };
  });
}

/**
 * An earlier query's observation as the model reads it, as its own run showed it: the client's
 * text and the tool's result (observationOf), one past the reply limits as the call's failure.
 */
function observationText(turn: ConversationTurn): string {
  const result = limitToolResult(toolResult(observationOf(turn)), turn.toolCall?.name ?? 'tool');
  if (!result.ok) return `error ${result.error.code}: ${result.error.message}`;
  return typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
}

/**
 * A client's observation as a tool's result: its output, or its failure as `TOOL_FAILED`.
 *
 * @example
 * ```ts
 * toolResult({ ok: true, output: { status: 'shipped' }, content: '' }); // { ok: true, output: { status: 'shipped' } }
 * ```
 */
export function toolResult(observation: ClientObservation): ToolResult {
  if (observation.ok) return { ok: true, output: observation.output };
  return { ok: false, error: errorInfo(ErrorCode.TOOL_FAILED, observation.error ?? observation.content, { hint: 'the client ran the tool and it failed' }) };
}

/**
 * A history calling a tool this step's list does not name cannot be a run of this step: 400, before anything is recorded.
 *
 * @example
 * ```ts
 * refuseUnlisted(position, agent); // throws REACT_STEP_HISTORY_INVALID naming the tool
 * ```
 */
export function refuseUnlisted(position: SessionPosition, agent: AgentCoreReactConfig): void {
  const unlisted = position.calls.find((call) => !agent.allowedTools.includes(call.tool));
  if (unlisted === undefined) return;
  throw new ApiError(
    errorInfo(ErrorCode.REACT_STEP_HISTORY_INVALID, `the history calls ${unlisted.tool}, which available_tools_prompt_segment does not list`, {
      path: '/conversation_history',
      hint: 'a history names only tools of available_tools_prompt_segment; send it as the last answer gave it',
    }),
  );
}

/**
 * An observation as a run records a client's reply (see answerEvent in runtime/runSession.ts): cut
 * of secrets, and a failure past the reply limits. A rebuilt log holds what the session's own log
 * would have, and the answer gives the client back the same (asRecorded).
 */
function asReply(result: ToolResult, tool: string): ToolResult {
  const reply = redactReply(result.ok ? { ok: true, data: result.output } : { ok: false, error: result.error });
  return limitToolResult(reply.ok ? { ok: true, output: reply.data } : reply, tool);
}

/**
 * A client's observation as its run records it (asReply), to compare with the log.
 *
 * @example
 * ```ts
 * matchHistory(position.calls, envelope.tools.history, loggedObservation);
 * ```
 */
export function loggedObservation(observation: ClientObservation, tool: string): ClientObservation {
  const result = asReply(toolResult(observation), tool);
  return result.ok ? { ...observation, output: result.output } : { ...observation, ok: false };
}

/**
 * Writes the log a query's run would have, from the client's history: the start, then each call
 * the history shows (the model's decision, the call, its observation). Used when the server has
 * no log for the session (another server answered its earlier steps, or the log was lost): the
 * client's history is the truth, and the run goes on from it.
 *
 * @example
 * ```ts
 * await rebuildFromHistory(store, traceId, position, agent, tools, contextText, clock);
 * ```
 */
export async function rebuildFromHistory(
  store: { append(event: AgentEvent): Promise<void> },
  traceId: string,
  position: SessionPosition,
  agent: AgentCoreReactConfig,
  tools: readonly ToolSpec[],
  context: string | undefined,
  clock: Clock,
): Promise<void> {
  const events: AgentEvent[] = [];
  const time = new Date(clock.now()).toISOString();
  const append = (type: AgentEvent['type'], iteration: number, data: unknown) => {
    const seq = events.length + 1;
    events.push({ id: `${traceId}:${seq}`, traceId, seq, time, type, iteration, data } as AgentEvent);
  };
  const history = historyMessages(position.earlierTurns);
  append('run.started', 0, {
    input: position.query,
    startedAt: time,
    agent,
    tools: [...tools],
    ...(history.length > 0 && { history }),
    ...(context !== undefined && { context }),
  });
  const prompt = buildSystemPrompt(tools, agent.instructions);
  for (const [index, call] of position.calls.entries()) {
    const iteration = index + 1;
    const idempotencyKey = `${traceId}:${iteration}`;
    append('model.requested', iteration, { prompt });
    append('model.answered', iteration, { text: JSON.stringify({ action: 'tool', tool: call.tool, input: call.input, confidence: 1 }), durationMs: 0, attempts: 1 });
    append('tool.requested', iteration, { tool: call.tool, input: call.input, confidence: 1, idempotencyKey, wait: { for: 'client', timeoutMs: waitTimeoutOf(agent) } });
    if (call.observation !== undefined && index < position.calls.length - 1) {
      const result = asReply(toolResult(call.observation), call.tool);
      append('tool.completed', iteration, { tool: call.tool, idempotencyKey, ok: result.ok, durationMs: 0, ...(result.ok ? { output: result.output } : { error: result.error }) });
    }
  }
  // A history this step's run could not have (a tool its list does not name, more calls than its
  // iterations) is the client's mistake: refused before anything is written, so no half-built
  // log is left to refuse the session's later steps.
  const path = createRunPathCheck();
  for (const event of events) {
    const impossible = path.next(event);
    if (impossible !== undefined) {
      throw new ApiError(
        errorInfo(ErrorCode.REACT_STEP_HISTORY_INVALID, `the history cannot be a run of this step: ${impossible}`, {
          path: '/conversation_history',
          hint: 'a history names only tools of available_tools_prompt_segment, at most max_iterations_left calls; send it as the last answer gave it',
        }),
      );
    }
  }
  for (const event of events) await store.append(event);
}
