/** A run's log read back step by step, for `redflow replay --steps` and the editor's step details (pure: no I/O). */
import type { ChatMessage } from '../actors/model.js';
import type {
  ErrorInfoData,
  MemoryRequestedData,
  ModelAnsweredData,
  RunEndedData,
  RunOutcome,
  ToolCompletedData,
  ToolRequestedData,
} from '../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from './eventTypes.js';
import { runSteps, type RunStep } from './runSteps.js';
import { buildMessages } from '../machines/prompt.js';

/**
 * What the core made of a model's answer, read from the event after `model.answered`:
 * `tool` (a valid tool call), `final` (a final answer), `rejected` (the run failed on it, with the
 * error's code), `ended` (the run ended for another reason, e.g. aborted), `pending` (the log
 * stops there: the run is unfinished).
 */
export type AnswerVerdict =
  | { readonly kind: 'tool'; readonly tool: string }
  | { readonly kind: 'final' }
  | { readonly kind: 'rejected'; readonly error: ErrorInfoData | null }
  | { readonly kind: 'ended'; readonly reason: RunOutcome['reason'] }
  | { readonly kind: 'pending' };

/** The model call of one iteration: its raw answer as logged (the thought is logged only in debug). */
export interface ModelCallDetails {
  /** The model's answer exactly as logged (`model.answered.text`). */
  readonly text: string;
  readonly durationMs: number;
  readonly attempts: number | null;
  readonly usage: ModelAnsweredData['usage'] | null;
  /** The answer's length before it was cut to the answer limit, when it was cut. */
  readonly originalLength: number | null;
  /** True when the answer carried a thought that was kept out of the log (no debug): `text` is the answer without it. */
  readonly thoughtHidden: boolean;
  /** With `thoughtHidden`, when the thought could not be taken out cleanly: the verdict on the answer as received. */
  readonly rejection: ErrorInfoData | null;
  readonly verdict: AnswerVerdict;
}

/** The tool call of one iteration: what the model asked for and what the tool gave back. */
export interface ToolCallDetails {
  readonly tool: string;
  readonly input: ToolRequestedData['input'];
  readonly confidence: number;
  readonly message: string | null;
  readonly thought: string | null;
  readonly idempotencyKey: string;
  /** The tool's result; null while the call is unfinished in the log. */
  readonly result:
    | { readonly ok: true; readonly output: unknown; readonly durationMs: number }
    | { readonly ok: false; readonly error: ErrorInfoData | null; readonly durationMs: number }
    | null;
}

/** One iteration of a run, in detail. */
export interface IterationDetails {
  readonly iteration: number;
  /** The messages the model was sent after the system prompt, rebuilt from the log. */
  readonly messages: readonly ChatMessage[];
  /** The model's answer; null when the call failed or the log stops before it. */
  readonly model: ModelCallDetails | null;
  readonly tool: ToolCallDetails | null;
  /** Why this iteration failed (a tool error, a rejected answer, a model error); null when it did not. */
  readonly failure: { readonly step: 'model' | 'answer' | 'tool'; readonly error: ErrorInfoData | null } | null;
}

/** The memory step of a run's ending: its turn saved to the conversation. */
export interface MemoryStepDetails {
  readonly conversationId: string;
  readonly maxTurns: number;
  readonly turn: MemoryRequestedData['turn'];
  /** How long the save took; null when the log stops before it was saved. */
  readonly savedInMs: number | null;
}

/**
 * A run read back step by step from its log (`redflow replay --steps --json`): for each iteration
 * what the model saw and answered, what the core made of it, and what the tool got and returned.
 */
export interface RunDetails {
  readonly traceId: string;
  readonly startedAt: string;
  readonly input: unknown;
  /** The system prompt, the same for every model call; null when no model call was logged. */
  readonly systemPrompt: string | null;
  readonly iterations: readonly IterationDetails[];
  readonly memory: MemoryStepDetails | null;
  /** How the run ended, with the final answer's confidence and thought when logged; null when unfinished. */
  readonly ending: (RunEndedData & { readonly event: 'run.completed' | 'run.failed' }) | null;
  /** The `seq` after which each resume continued the log. */
  readonly resumedAfter: readonly number[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Reads a run's log as iterations in detail. The messages of each model call are rebuilt from the
 * fold of the log up to that call, with the same function the run used to build them, so they
 * are what the model was sent.
 *
 * @example
 * ```ts
 * runDetails(events).iterations[0]?.model?.verdict // { kind: 'tool', tool: 'lookup_order' }
 * ```
 */
export function runDetails(events: readonly AgentEvent[]): RunDetails {
  return runDetailsOfSteps(runSteps(events));
}

/** {@link runDetails} of a log already folded into steps (the editor keeps them for its scrubber). */
export function runDetailsOfSteps(steps: readonly RunStep[]): RunDetails {
  const iterations: Mutable<IterationDetails>[] = [];
  const resumedAfter: number[] = [];
  let systemPrompt: string | null = null;
  let memory: Mutable<MemoryStepDetails> | null = null;
  let ending: RunDetails['ending'] = null;
  const current = (iteration: number) => {
    const last = iterations.at(-1);
    if (last?.iteration === iteration) return last;
    const fresh: Mutable<IterationDetails> = { iteration, messages: [], model: null, tool: null, failure: null };
    iterations.push(fresh);
    return fresh;
  };
  steps.forEach((step, index) => {
    const { event } = step;
    switch (event.type) {
      case AgentEventType.RunResumed:
        resumedAfter.push(event.data.afterSeq);
        break;
      case AgentEventType.ModelRequested: {
        systemPrompt ??= event.data.prompt;
        const it = current(event.iteration);
        // A resumed run asks again for an iteration whose answer was lost: the later call counts.
        it.messages = buildMessages(event.data.prompt, step.envelope).slice(1);
        it.model = null;
        break;
      }
      case AgentEventType.ModelAnswered:
        current(event.iteration).model = modelCall(event.data, verdictAfter(steps, index));
        break;
      case AgentEventType.ToolRequested:
        current(event.iteration).tool = toolCall(event.data);
        break;
      case AgentEventType.ToolCompleted: {
        const it = current(event.iteration);
        if (it.tool) it.tool = { ...it.tool, result: toolResult(event.data) };
        if (!event.data.ok) it.failure = { step: 'tool', error: event.data.error ?? null };
        break;
      }
      case AgentEventType.MemoryRequested:
        memory = { conversationId: event.data.conversationId, maxTurns: event.data.maxTurns, turn: event.data.turn, savedInMs: null };
        break;
      case AgentEventType.MemorySaved:
        if (memory) memory.savedInMs = event.data.durationMs;
        break;
      case AgentEventType.RunCompleted:
      case AgentEventType.RunFailed: {
        ending = { event: event.type, ...event.data };
        if (event.type === AgentEventType.RunFailed) markFailure(iterations.at(-1), event.data.outcome);
        break;
      }
      case AgentEventType.RunStarted:
        break;
    }
  });
  const envelope = steps.at(-1)?.envelope;
  return {
    traceId: envelope?.observability.traceId ?? '',
    startedAt: envelope?.observability.startedAt ?? '',
    input: envelope?.input ?? null,
    systemPrompt,
    iterations,
    memory,
    ending,
    resumedAfter,
  };
}

/** A failed ending belongs to the last iteration: its model call failed, or its answer was rejected. */
function markFailure(last: Mutable<IterationDetails> | undefined, outcome: RunOutcome): void {
  if (!last || last.failure || !outcome.error) return;
  if (last.tool) return; // the tool's own failure, if any, is already marked; a stop after a good call is no step's failure
  last.failure = { step: last.model ? 'answer' : 'model', error: outcome.error };
}

/** The verdict on the answer at `index`: what the next event (or the ending a memory step carries) says. */
function verdictAfter(steps: readonly RunStep[], index: number): AnswerVerdict {
  const next = steps[index + 1]?.event;
  if (!next) return { kind: 'pending' };
  const ending =
    next.type === AgentEventType.MemoryRequested
      ? next.data.ending
      : next.type === AgentEventType.RunCompleted || next.type === AgentEventType.RunFailed
        ? { type: next.type, data: next.data }
        : undefined;
  if (next.type === AgentEventType.ToolRequested) return { kind: 'tool', tool: next.data.tool };
  if (!ending) return { kind: 'pending' };
  const { outcome } = ending.data;
  if (ending.type === AgentEventType.RunCompleted) return { kind: 'final' };
  if (outcome.reason === 'invalid_answer') return { kind: 'rejected', error: outcome.error ?? null };
  return { kind: 'ended', reason: outcome.reason };
}

function modelCall(data: ModelAnsweredData, verdict: AnswerVerdict): ModelCallDetails {
  return {
    text: data.text,
    durationMs: data.durationMs,
    attempts: data.attempts ?? null,
    usage: data.usage ?? null,
    originalLength: data.originalLength ?? null,
    thoughtHidden: data.thoughtHidden === true,
    rejection: data.rejection ?? null,
    verdict,
  };
}

function toolCall(data: ToolRequestedData): ToolCallDetails {
  return {
    tool: data.tool,
    input: data.input,
    confidence: data.confidence,
    message: data.message ?? null,
    thought: data.thought ?? null,
    idempotencyKey: data.idempotencyKey,
    result: null,
  };
}

function toolResult(data: ToolCompletedData): ToolCallDetails['result'] {
  return data.ok
    ? { ok: true, output: data.output ?? null, durationMs: data.durationMs }
    : { ok: false, error: data.error ?? null, durationMs: data.durationMs };
}
