import type { AgentEnvelope, IterationStep, TokenUsage, ToolCall } from '../contracts/schema-types.js';
import { AgentEventType, type RecordedFact } from './eventTypes.js';

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
 */
export function evolve(envelope: AgentEnvelope, event: RecordedFact): AgentEnvelope {
  switch (event.type) {
    case AgentEventType.RunStarted: {
      const { data } = event;
      const next: AgentEnvelope = {
        input: data.input,
        state: { iteration: 0, completed: false },
        tools: { available: [...data.agent.allowedTools], history: [] },
        observability: { traceId: envelope.observability.traceId, startedAt: data.startedAt, events: [] },
      };
      if (data.memory !== undefined) next.memory = data.memory;
      return next;
    }
    case AgentEventType.RunResumed:
      return envelope;
    case AgentEventType.ModelRequested:
      return {
        ...envelope,
        state: { ...envelope.state, iteration: event.iteration },
        model: { ...envelope.model, lastPrompt: event.data.prompt },
      };
    case AgentEventType.ModelAnswered: {
      const { data } = event;
      const step: IterationStep = { iteration: event.iteration, action: 'model', durationMs: data.durationMs };
      const observability = { ...envelope.observability, events: appended(envelope.observability.events, step) };
      if (data.usage) observability.usage = addUsage(envelope.observability.usage, data.usage);
      return { ...envelope, model: { ...envelope.model, lastResponse: data.text }, observability };
    }
    case AgentEventType.ToolRequested: {
      const { data } = event;
      const answer: Record<string, unknown> = {
        action: 'tool',
        tool: data.tool,
        input: data.input,
        confidence: data.confidence,
      };
      if (data.message !== undefined) answer.message = data.message;
      if (data.thought !== undefined) answer.thought = data.thought;
      const call: ToolCall = {
        iteration: event.iteration,
        tool: data.tool,
        input: data.input,
        idempotencyKey: data.idempotencyKey,
        status: 'requested',
      };
      return {
        ...envelope,
        state: { ...envelope.state, lastAction: 'tool', lastTool: data.tool },
        model: { ...envelope.model, lastResponse: answer },
        tools: { available: envelope.tools.available, history: appended(envelope.tools.history, call) },
        observability: replaceLastStep(envelope, event.iteration, (step) => ({
          ...step,
          action: 'tool',
          tool: data.tool,
          confidence: data.confidence,
        })),
      };
    }
    case AgentEventType.ToolCompleted: {
      const { data } = event;
      // The completed call is the last one (one tool call per iteration); search from the end.
      const history = envelope.tools.history.slice();
      for (let i = history.length - 1; i >= 0; i--) {
        const call = history[i] as ToolCall;
        if (call.idempotencyKey !== data.idempotencyKey) continue;
        const done: ToolCall = { ...call, status: data.ok ? 'succeeded' : 'failed', durationMs: data.durationMs };
        if (data.ok) done.output = data.output;
        else if (data.error) done.error = data.error;
        history[i] = done;
        break;
      }
      return {
        ...envelope,
        tools: { ...envelope.tools, history },
        observability: replaceLastStep(envelope, event.iteration, (step) => ({
          ...step,
          durationMs: (step.durationMs ?? 0) + data.durationMs,
        })),
      };
    }
    case AgentEventType.RunCompleted: {
      const { outcome } = event.data;
      if (outcome.reason !== 'final_answer') {
        return { ...envelope, observability: { ...envelope.observability, outcome } };
      }
      const answer: Record<string, unknown> = { action: 'final' };
      if (outcome.answer !== undefined) answer.message = outcome.answer;
      if (event.data.confidence !== undefined) answer.confidence = event.data.confidence;
      if (event.data.thought !== undefined) answer.thought = event.data.thought;
      const withOutcome = { ...envelope.observability, outcome };
      return {
        ...envelope,
        state: { ...envelope.state, lastAction: 'final', completed: true },
        model: { ...envelope.model, lastResponse: answer },
        observability: {
          ...withOutcome,
          events: replaceLastStep(envelope, event.iteration, (step) => {
            const final: IterationStep = { ...step, action: 'final' };
            if (event.data.confidence !== undefined) final.confidence = event.data.confidence;
            return final;
          }).events,
        },
      };
    }
    case AgentEventType.RunFailed: {
      const { outcome } = event.data;
      const code = outcome.error?.code;
      const events = replaceLastStep(envelope, event.iteration, (step) => {
        const failed: IterationStep = { ...step, action: 'error' };
        if (code !== undefined) failed.code = code;
        return failed;
      }).events;
      return { ...envelope, observability: { ...envelope.observability, events, outcome } };
    }
  }
}

/**
 * Updates the timeline line of `iteration` if it is the last one and still open (its model
 * answered); otherwise the change belongs to a new line (a failure before any answer).
 */
function replaceLastStep(
  envelope: AgentEnvelope,
  iteration: number,
  change: (step: IterationStep) => IterationStep,
): AgentEnvelope['observability'] {
  const { events } = envelope.observability;
  const last = events[events.length - 1];
  let next: IterationStep[];
  if (last && last.iteration === iteration && (last.action === 'model' || last.action === 'tool')) {
    next = events.slice();
    next[next.length - 1] = change(last);
  } else {
    next = appended(events, change({ iteration, action: 'model' }));
  }
  return { ...envelope.observability, events: next };
}

/** A copy of `items` with `item` at the end (cheaper than spreading). */
function appended<T>(items: readonly T[], item: T): T[] {
  const next = items.slice();
  next.push(item);
  return next;
}

function addUsage(total: TokenUsage | undefined, more: TokenUsage): TokenUsage {
  if (!total) return { ...more };
  return {
    promptTokens: total.promptTokens + more.promptTokens,
    completionTokens: total.completionTokens + more.completionTokens,
    totalTokens: total.totalTokens + more.totalTokens,
  };
}

/**
 * Folds a whole log. The first event's traceId names the run.
 *
 * @example
 * ```ts
 * const envelope = fold(await store.read(traceId));
 * ```
 */
export function fold(events: readonly (RecordedFact & { readonly traceId?: string })[], traceId?: string): AgentEnvelope {
  let envelope = emptyEnvelope(traceId ?? events[0]?.traceId ?? '');
  for (const event of events) envelope = evolve(envelope, event);
  return envelope;
}
