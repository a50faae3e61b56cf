import type { AgentEnvelope, ErrorInfoData, Exchange, RunOutcome, ToolCall } from '../contracts/schema-types.js';
import { ErrorCode } from '../errors.js';
import { AgentEventType, type RecordedFact } from './eventTypes.js';
import { addUsage, appended, makeModel, makeObservability, makeState, makeStep, openStep, replacedLast, verificationCompleted, verificationRequested, withParts } from './evolveParts.js';

// Objects are built with literals and explicit optional members rather than spread-and-extend
// (`{ ...step, tool }`): V8 takes a slow path for a spread that adds members, which made the fold
// several times slower. This file is on the loop's hot path and is replay's whole cost.

type Envelope = AgentEnvelope;

/**
 * The envelope of a run before its first event: what `evolve` starts from.
 *
 * @example
 * ```ts
 * const envelope = events.reduce(evolve, emptyEnvelope(events[0].traceId));
 * ```
 */
export function emptyEnvelope(traceId: string): AgentEnvelope {
  return {
    input: null,
    state: { iteration: 0, completed: false },
    tools: { available: [], history: [] },
    observability: { traceId, startedAt: '', events: [] },
  };
}

/**
 * The fold: the envelope after one more event. Pure and total: it never throws, never mutates its
 * arguments, and is the only place an envelope changes, for the live run and for replay alike.
 *
 * @example
 * ```ts
 * let envelope = emptyEnvelope(traceId);
 * for (const event of events) envelope = evolve(envelope, event); // the same as fold(events)
 * ```
 */
export function evolve(envelope: AgentEnvelope, event: RecordedFact): AgentEnvelope {
  switch (event.type) {
    case AgentEventType.RunStarted: {
      const { data } = event;
      const next: AgentEnvelope = {
        input: data.input,
        state: { iteration: 0, completed: false },
        tools: { available: data.agent.allowedTools.slice(), history: [] },
        observability: { traceId: envelope.observability.traceId, startedAt: data.startedAt, events: [] },
      };
      if (data.memory !== undefined) next.memory = data.memory;
      if (data.history !== undefined) next.history = data.history;
      if (data.context !== undefined) next.context = data.context;
      return next;
    }
    // A fork's lineage: the only part of its envelope its parent's prefix does not give.
    case AgentEventType.RunForked: {
      const { parent, atSeq } = event.data;
      const lineage: NonNullable<AgentEnvelope['lineage']> = { parent: parent.log === undefined ? { traceId: parent.traceId } : { traceId: parent.traceId, log: parent.log }, atSeq };
      const next: AgentEnvelope = withParts(envelope, envelope.state, envelope.model, envelope.tools, envelope.observability);
      next.lineage = lineage;
      return next;
    }
    case AgentEventType.RunResumed:
    // The memory step leaves the envelope as it is: the ending it saves is folded when recorded.
    case AgentEventType.MemoryRequested:
    case AgentEventType.MemorySaved:
      return envelope;
    case AgentEventType.ModelRequested: {
      const { state } = envelope;
      return withParts(
        envelope,
        makeState(event.iteration, state.completed, state.lastAction, state.lastTool),
        makeModel(event.data.prompt, envelope.model?.lastResponse, envelope.model !== undefined && 'lastResponse' in envelope.model),
        envelope.tools,
        envelope.observability,
      );
    }
    case AgentEventType.ModelAnswered: {
      const { data } = event;
      const obs = envelope.observability;
      const events = appended(obs.events, makeStep(event.iteration, 'model', undefined, undefined, data.durationMs, undefined));
      const usage = data.usage ? addUsage(obs.usage, data.usage) : obs.usage;
      return withParts(
        envelope,
        envelope.state,
        makeModel(envelope.model?.lastPrompt, data.text, true),
        envelope.tools,
        makeObservability(obs, events, usage, obs.outcome),
      );
    }
    case AgentEventType.ToolRequested: {
      const { data } = event;
      const answer: Record<string, unknown> = { action: 'tool', tool: data.tool, input: data.input, confidence: data.confidence };
      if (data.message !== undefined) answer.message = data.message;
      if (data.thought !== undefined) answer.thought = data.thought;
      const call: ToolCall = {
        iteration: event.iteration,
        tool: data.tool,
        input: data.input,
        idempotencyKey: data.idempotencyKey,
        status: 'requested',
      };
      if (data.childTraceId !== undefined) call.childTraceId = data.childTraceId;
      const obs = envelope.observability;
      const last = openStep(obs.events, event.iteration);
      const step = makeStep(event.iteration, 'tool', data.tool, data.confidence, last?.durationMs, undefined);
      return withParts(
        envelope,
        makeState(envelope.state.iteration, envelope.state.completed, 'tool', data.tool),
        makeModel(envelope.model?.lastPrompt, answer, true),
        { available: envelope.tools.available, history: appended(envelope.tools.history, call) },
        makeObservability(obs, last ? replacedLast(obs.events, step) : appended(obs.events, step), obs.usage, obs.outcome),
      );
    }
    case AgentEventType.ToolCompleted: {
      const { data } = event;
      return completedCall(envelope, event.iteration, data.idempotencyKey, data.ok, data.output, data.error, data.durationMs);
    }
    // An approval changes nothing yet: the call is made (or its client's result awaited) next.
    case AgentEventType.ToolApproved:
      return envelope;
    // Where the call's work lives is for re-sending the call (the resume point reads it), not for the model.
    case AgentEventType.ToolAttached:
      return envelope;
    // A denied call is never made: it fails with the denial, which the model sees as its observation.
    case AgentEventType.ToolDenied:
      return completedCall(envelope, event.iteration, event.data.idempotencyKey, false, undefined, event.data.error, undefined);
    case AgentEventType.HumanRequested: {
      const { data } = event;
      const exchange: Exchange = { iteration: event.iteration, kind: data.action, status: 'waiting', question: data.question };
      if (data.reason !== undefined) exchange.reason = data.reason;
      if (data.context !== undefined) exchange.context = data.context;
      const answer: Record<string, unknown> = { action: data.action, input: askInput(exchange) };
      if (data.thought !== undefined) answer.thought = data.thought;
      const obs = envelope.observability;
      const last = openStep(obs.events, event.iteration);
      const step = makeStep(event.iteration, data.action, undefined, data.confidence, last?.durationMs, undefined);
      return withParts(
        envelope,
        makeState(envelope.state.iteration, envelope.state.completed, data.action, envelope.state.lastTool),
        makeModel(envelope.model?.lastPrompt, answer, true),
        envelope.tools,
        makeObservability(obs, last ? replacedLast(obs.events, step) : appended(obs.events, step), obs.usage, obs.outcome),
        appended(envelope.exchanges ?? [], exchange),
      );
    }
    case AgentEventType.HumanAnswered:
      return withParts(envelope, envelope.state, envelope.model, envelope.tools, envelope.observability, answered(envelope.exchanges, event.data.answer));
    case AgentEventType.OutputRejected: {
      const { data } = event;
      const exchange: Exchange = { iteration: event.iteration, kind: 'output_repair', status: 'answered', output: data.output, errors: data.errors.slice() };
      const obs = envelope.observability;
      const last = openStep(obs.events, event.iteration);
      const step = makeStep(event.iteration, 'final', undefined, last?.confidence, last?.durationMs, ErrorCode.OUTPUT_INVALID);
      return withParts(
        envelope,
        makeState(envelope.state.iteration, envelope.state.completed, 'final', envelope.state.lastTool),
        makeModel(envelope.model?.lastPrompt, { action: 'final', output: data.output }, true),
        envelope.tools,
        makeObservability(obs, last ? replacedLast(obs.events, step) : appended(obs.events, step), obs.usage, obs.outcome),
        appended(envelope.exchanges ?? [], exchange),
      );
    }
    // The rejected answer is the iteration's decision, its error the observation (like a failed call's).
    case AgentEventType.AnswerRejected: {
      const { data } = event;
      const exchange: Exchange = { iteration: event.iteration, kind: 'answer_repair', status: 'answered', answer: data.text, error: data.error };
      const obs = envelope.observability;
      const last = openStep(obs.events, event.iteration);
      const step = makeStep(event.iteration, 'error', undefined, undefined, last?.durationMs, data.error.code);
      return withParts(
        envelope,
        envelope.state,
        envelope.model,
        envelope.tools,
        makeObservability(obs, last ? replacedLast(obs.events, step) : appended(obs.events, step), obs.usage, obs.outcome),
        appended(envelope.exchanges ?? [], exchange),
      );
    }
    case AgentEventType.VerificationRequested:
      return verificationRequested(envelope, event);
    case AgentEventType.VerificationCompleted:
      return verificationCompleted(envelope, event);
    case AgentEventType.RunCompleted: {
      const { outcome, confidence, thought } = event.data;
      const obs = envelope.observability;
      if (outcome.reason === 'delegated' && outcome.handoff !== undefined) return delegated(envelope, event.iteration, outcome);
      if (outcome.reason !== 'final_answer') {
        return withParts(envelope, envelope.state, envelope.model, envelope.tools, makeObservability(obs, obs.events, obs.usage, outcome));
      }
      const answer: Record<string, unknown> = { action: 'final' };
      if (outcome.answer !== undefined) answer.message = outcome.answer;
      if (outcome.output !== undefined) answer.output = outcome.output;
      if (confidence !== undefined) answer.confidence = confidence;
      if (thought !== undefined) answer.thought = thought;
      const last = openStep(obs.events, event.iteration);
      const step = makeStep(event.iteration, 'final', last?.tool, confidence ?? last?.confidence, last?.durationMs, undefined);
      return withParts(
        envelope,
        makeState(envelope.state.iteration, true, 'final', envelope.state.lastTool),
        makeModel(envelope.model?.lastPrompt, answer, true),
        envelope.tools,
        makeObservability(obs, last ? replacedLast(obs.events, step) : appended(obs.events, step), obs.usage, outcome),
      );
    }
    case AgentEventType.RunFailed: {
      const { outcome } = event.data;
      const obs = envelope.observability;
      const last = openStep(obs.events, event.iteration);
      const code = outcome.error?.code;
      const step = last
        ? makeStep(last.iteration, 'error', last.tool, last.confidence, last.durationMs, code)
        : makeStep(event.iteration, 'error', undefined, undefined, undefined, code);
      return withParts(
        envelope,
        envelope.state,
        envelope.model,
        envelope.tools,
        makeObservability(obs, last ? replacedLast(obs.events, step) : appended(obs.events, step), obs.usage, outcome),
      );
    }
  }
}

/** The call with this key completed (or failed, or denied): its history entry and its timeline line. */
function completedCall(
  envelope: Envelope,
  iteration: number,
  idempotencyKey: string,
  ok: boolean,
  output: unknown,
  error: ErrorInfoData | undefined,
  durationMs: number | undefined,
): Envelope {
  // The completed call is the last one (one tool call per iteration); search from the end.
  const history = envelope.tools.history.slice();
  for (let i = history.length - 1; i >= 0; i--) {
    const call = history[i] as ToolCall;
    if (call.idempotencyKey !== idempotencyKey) continue;
    const done: ToolCall = {
      iteration: call.iteration,
      tool: call.tool,
      input: call.input,
      idempotencyKey: call.idempotencyKey,
      status: ok ? 'succeeded' : 'failed',
    };
    if (ok) done.output = output;
    else if (error) done.error = error;
    if (durationMs !== undefined) done.durationMs = durationMs;
    if (call.childTraceId !== undefined) done.childTraceId = call.childTraceId;
    history[i] = done;
    break;
  }
  const obs = envelope.observability;
  const last = openStep(obs.events, iteration);
  // A failed call marks its line with the tool error's code: the timeline must not read like a success.
  const code = ok ? last?.code : (error?.code ?? ErrorCode.TOOL_FAILED);
  const events = last
    ? replacedLast(obs.events, makeStep(last.iteration, last.action, last.tool, last.confidence, (last.durationMs ?? 0) + (durationMs ?? 0), code))
    : obs.events;
  return withParts(
    envelope,
    envelope.state,
    envelope.model,
    { available: envelope.tools.available, history },
    makeObservability(obs, events, obs.usage, obs.outcome),
  );
}

/** The run ended by handing its task to another agent: the timeline's line and the last answer say so. */
function delegated(envelope: Envelope, iteration: number, outcome: RunOutcome): Envelope {
  const handoff = outcome.handoff as NonNullable<RunOutcome['handoff']>;
  const answer: Record<string, unknown> = { action: 'delegate', input: { agent_id: handoff.agentId, task: handoff.task } };
  if (outcome.answer !== undefined) answer.message = outcome.answer;
  const obs = envelope.observability;
  const last = openStep(obs.events, iteration);
  const step = makeStep(iteration, 'delegate', undefined, last?.confidence, last?.durationMs, undefined);
  return withParts(
    envelope,
    makeState(envelope.state.iteration, true, 'delegate', envelope.state.lastTool),
    makeModel(envelope.model?.lastPrompt, answer, true),
    envelope.tools,
    makeObservability(obs, last ? replacedLast(obs.events, step) : appended(obs.events, step), obs.usage, outcome),
  );
}

/** The input of a question to a person, as the model gave it. */
function askInput(exchange: Exchange): Record<string, unknown> {
  const input: Record<string, unknown> = { question: exchange.question };
  if (exchange.reason !== undefined) input.reason = exchange.reason;
  if (exchange.context !== undefined) input.context = exchange.context;
  return input;
}

/** The exchanges with the last one, the question the run waits on, answered. */
function answered(exchanges: readonly Exchange[] | undefined, answer: string): Exchange[] | undefined {
  if (exchanges === undefined || exchanges.length === 0) return exchanges?.slice();
  const asked = exchanges[exchanges.length - 1] as Exchange;
  const done: Exchange = { iteration: asked.iteration, kind: asked.kind, status: 'answered' };
  if (asked.question !== undefined) done.question = asked.question;
  if (asked.reason !== undefined) done.reason = asked.reason;
  if (asked.context !== undefined) done.context = asked.context;
  done.answer = answer;
  return replacedLast(exchanges, done);
}

/**
 * Folds a whole log. The first event's traceId names the run.
 *
 * @example
 * ```ts
 * const envelope = fold((await store.read(traceId)).events);
 * ```
 */
export function fold(events: readonly (RecordedFact & { readonly traceId?: string })[], traceId?: string): AgentEnvelope {
  let envelope = emptyEnvelope(traceId ?? events[0]?.traceId ?? '');
  for (const event of events) envelope = evolve(envelope, event);
  return envelope;
}
