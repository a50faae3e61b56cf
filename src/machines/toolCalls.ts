import type { ToolApprovedData, ToolAttachedData, ToolCompletedData, ToolDeniedData, ToolRequestedData } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { AgentEventType, type RecordedFact } from '../events/eventTypes.js';
import { waitAfterApproval, waitAfterRequest } from '../events/waits.js';
import type { ReactContext, ReactEvent, TransportCommand } from './reactTypes.js';
import { childTraceIdOf, delegatedSubagent, isSubagent } from './subagents.js';

// The tool call an answer makes, and what the statechart records of it (requested, approved,
// denied, attached, completed) and sends for it. Pure, like verification.ts: read off the context
// and the event, so a resumed run records the same.

type EventOf<T extends ReactEvent['type']> = Extract<ReactEvent, { type: T }>;

/** The answer being judged, when it is valid. */
export function validAnswer(context: ReactContext) {
  const { validation } = context;
  return validation?.ok === true ? validation.answer : undefined;
}

/** The call the answer being judged makes: a valid tool call, or a delegation to a connected subagent (called like a tool). */
export interface AnswerCall {
  readonly tool: string;
  readonly input: ToolRequestedData['input'];
  readonly confidence: number;
}

/**
 * The REACT statechart's tool calls, for its guards and actions (`reactSetup.ts`).
 *
 * @example
 * ```ts
 * actions: { recordToolApproved: recording(({ context, event }) => record(ToolCalls.approved(context, event))) }
 * ```
 */
export const ToolCalls = {
  /** The call of the answer being judged, when it makes one: see {@link AnswerCall}. */
  ofAnswer(context: ReactContext): AnswerCall | undefined {
    const answer = validAnswer(context);
    if (answer?.action === 'tool') return { tool: answer.tool as string, input: (answer.input ?? {}) as ToolRequestedData['input'], confidence: answer.confidence as number };
    if (answer?.action !== 'delegate') return undefined;
    const subagent = delegatedSubagent(context.settings.agent, context.settings.tools, answer.input);
    if (subagent === undefined) return undefined;
    // A delegation names no confidence of its own: 0 keeps a confidence threshold from ending the run on it.
    return { tool: subagent, input: { task: (answer.input as { task?: unknown }).task }, confidence: answer.confidence ?? 0 };
  },
  /** The current iteration's tool call: the last one requested (one tool call per iteration). */
  current(context: ReactContext) {
    const { history } = context.envelope.tools;
    return history[history.length - 1];
  },
  /** `tool.requested`, when the answer being judged makes a call. */
  requested(context: ReactContext): RecordedFact | undefined {
    const answer = validAnswer(context);
    const call = ToolCalls.ofAnswer(context);
    if (answer === undefined || call === undefined) return undefined;
    const iteration = context.envelope.state.iteration;
    const data: ToolRequestedData = {
      tool: call.tool,
      input: call.input,
      confidence: call.confidence,
      // One tool call per iteration, so trace and iteration identify the call, and a call
      // re-sent after a crash carries the same key.
      idempotencyKey: `${context.settings.traceId}:${iteration}`,
    };
    // The run a subagent call starts is named by the call: the log links the two before it starts.
    if (isSubagent(context.settings.tools, call.tool)) data.childTraceId = childTraceIdOf(context.settings.traceId, iteration);
    if (answer.message !== undefined) data.message = answer.message;
    if (context.settings.agent.debug && answer.thought !== undefined) data.thought = answer.thought;
    // The log says the run waits, and for how long: its readers need no config to know.
    const wait = waitAfterRequest(context.settings.agent, context.settings.tools, data.tool);
    if (wait !== undefined) data.wait = wait;
    return { type: AgentEventType.ToolRequested, iteration, data };
  },
  /** `tool.approved`: a person approved the call the run waits on. */
  approved(context: ReactContext, event: EventOf<'tool.approve'>): RecordedFact {
    const call = ToolCalls.current(context);
    const tool = call?.tool ?? '';
    const data: ToolApprovedData = { tool, idempotencyKey: call?.idempotencyKey ?? '' };
    if (event.reason !== undefined) data.reason = event.reason;
    const wait = waitAfterApproval(context.settings.agent, context.settings.tools, tool);
    if (wait !== undefined) data.wait = wait;
    return { type: AgentEventType.ToolApproved, iteration: context.envelope.state.iteration, data };
  },
  /** `tool.denied`: a person denied the call the run waits on. */
  denied(context: ReactContext, event: EventOf<'tool.deny'>): RecordedFact {
    const call = ToolCalls.current(context);
    const tool = call?.tool ?? '';
    // The denial is the model's next observation: it must say why, so the model can do otherwise.
    const error = errorInfo(
      ErrorCode.TOOL_DENIED,
      event.reason === undefined ? `the call to ${tool} was denied by the person reviewing it` : `the call to ${tool} was denied by the person reviewing it: ${event.reason}`,
      { hint: 'do not repeat this call as it was; change it or answer without it' },
    );
    const data: ToolDeniedData = { tool, idempotencyKey: call?.idempotencyKey ?? '', error };
    if (event.reason !== undefined) data.reason = event.reason;
    return { type: AgentEventType.ToolDenied, iteration: context.envelope.state.iteration, data };
  },
  /** The transport actor's request for the current call. */
  command(context: ReactContext): TransportCommand {
    const call = ToolCalls.current(context);
    const idempotencyKey = call?.idempotencyKey ?? '';
    // A call re-sent after the tool said where its work lives goes back to that work.
    const attached = context.settings.resume?.attached;
    return {
      type: 'tool.request',
      request: {
        traceId: context.settings.traceId,
        iteration: call?.iteration ?? context.envelope.state.iteration,
        tool: call?.tool ?? '',
        input: (call?.input ?? {}) as Record<string, unknown>,
        idempotencyKey,
        ...(attached !== undefined && attached.idempotencyKey === idempotencyKey && { attached: attached.handle }),
      },
    };
  },
  /** `tool.attached`: the call in flight said where its work lives. */
  attached(context: ReactContext, event: EventOf<'tool.attached'>): RecordedFact | undefined {
    const call = ToolCalls.current(context);
    // A late word from an earlier call (its reply already taken) is not this call's.
    if (call === undefined || event.idempotencyKey !== call.idempotencyKey) return undefined;
    const data: ToolAttachedData = { tool: call.tool, idempotencyKey: call.idempotencyKey, handle: { ...event.handle } };
    return { type: AgentEventType.ToolAttached, iteration: context.envelope.state.iteration, data };
  },
  /** `tool.completed`: the call's reply (or the client's result). */
  completed(context: ReactContext, event: EventOf<'tool.result'>): RecordedFact {
    const call = ToolCalls.current(context);
    const { result } = event;
    const data: ToolCompletedData = { tool: call?.tool ?? '', idempotencyKey: call?.idempotencyKey ?? '', ok: result.ok, durationMs: 0 };
    if (result.ok) data.output = result.output;
    else data.error = result.error;
    data.durationMs = event.durationMs;
    if (call?.childTraceId !== undefined) data.childTraceId = call.childTraceId;
    return { type: AgentEventType.ToolCompleted, iteration: context.envelope.state.iteration, data };
  },
} as const;
