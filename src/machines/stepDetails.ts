/** A run's log read back step by step, for `redflow replay --steps` and the editor's step details (pure: no I/O). */
import type { ChatMessage } from './protocol.js';
import type {
  ErrorInfoData,
  Exchange,
  MemoryRequestedData,
  ModelAnsweredData,
  ParentCall,
  RunEndedData,
  RunOutcome,
  ToolCompletedData,
  ToolRequestedData,
  VerificationCompletedData,
  WaitStart,
} from '../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { ErrorCode } from '../errors.js';
import { messagesShown } from './prompt.js';
import { runSteps, type RunStep } from './runSteps.js';
import { switchLine } from './modelSwitch.js';

/**
 * What the core made of a model's answer, read from the event after `model.answered`:
 * `tool` (a valid tool call), `final` (a final answer), `ask` (a question to a person: escalate,
 * request_info), `repair` (a final output sent back: it did not match the outputSchema),
 * `delegate` (the task handed to another agent), `rejected` (it broke the answer format: the run
 * failed on it with the error's code, or, `repaired`, sent it back to the model with the error), `ended` (the run ended for another reason, e.g. aborted), `pending` (the log
 * stops there: the run is unfinished).
 */
export type AnswerVerdict =
  | { readonly kind: 'tool'; readonly tool: string }
  | { readonly kind: 'final' }
  | { readonly kind: 'ask'; readonly action: 'escalate' | 'request_info' }
  | { readonly kind: 'repair' }
  | { readonly kind: 'rejected'; readonly error: ErrorInfoData | null; readonly repaired: true }
  | { readonly kind: 'delegate'; readonly agentId: string }
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
  /** When a fallback model answered: which, after which failed ({@link switchLine}). */
  readonly switchedModel: string | null;
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
  /**
   * What the call waits for when the log stops there: a person's decision (`approval`) or the
   * result of the client that runs the tool (`client`); null when it waits for nothing.
   */
  readonly waiting: WaitStart['for'] | null;
  /** A person's decision on the call (`requiresApproval`), with the reason given; null when it needed none or has none yet. */
  readonly approval: { readonly decision: 'approved' | 'denied'; readonly reason: string | null } | null;
  /**
   * For a call of a subagent: the trace id of the run it started (its own log: `<traceId>.jsonl`
   * beside this one, or the subagent's prefix on a cluster); null for a tool.
   */
  readonly childTraceId: string | null;
  /** The tool's result; null while the call is unfinished in the log (a denied call's result is the denial). */
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
  /**
   * The iteration's turn that is not a tool call: the model's question to a person (escalate,
   * request_info) with the answer once given, or its final output sent back with the schema's errors.
   */
  readonly exchange?: Exchange;
  /**
   * Why this iteration failed, or why the run ended in it with an error, by the step that failed or
   * was under way; null when neither. See {@link FailedStep}.
   */
  readonly failure: { readonly step: FailedStep; readonly error: ErrorInfoData | null } | null;
}

/**
 * The step an iteration's failure belongs to: `model` (the call failed, or the run ended while it
 * waited for the answer), `answer` (rejected), `tool` (the call failed or was denied, or the run
 * ended while it ran or waited), `memory` (the run ended saving its turn: the save failed, or a
 * timeout or an abort came first), `ending` (every step had finished, and the run ended with an
 * error after them: the iteration limit after a good tool call, an abort or a timeout between steps).
 */
export type FailedStep = 'model' | 'answer' | 'tool' | 'memory' | 'ending';

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
  /** The call of another run that started this run as its subagent; null for a run started otherwise. */
  readonly parent: ParentCall | null;
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
  let parent: ParentCall | null = null;
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
        // Messages left out to fit the window are left out here too, with the note the model saw.
        it.messages = messagesShown(event.data.prompt, step.envelope, event.data.omittedMessages).slice(1);
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
        if (it.tool) it.tool = { ...it.tool, waiting: null, result: toolResult(event.data) };
        if (!event.data.ok) it.failure = { step: 'tool', error: event.data.error ?? null };
        break;
      }
      case AgentEventType.ToolApproved: {
        const it = current(event.iteration);
        const approval = { decision: 'approved' as const, reason: event.data.reason ?? null };
        if (it.tool) it.tool = { ...it.tool, waiting: event.data.wait?.for ?? null, approval };
        break;
      }
      case AgentEventType.ToolDenied: {
        const it = current(event.iteration);
        const approval = { decision: 'denied' as const, reason: event.data.reason ?? null };
        if (it.tool) it.tool = { ...it.tool, waiting: null, approval, result: { ok: false, error: event.data.error, durationMs: 0 } };
        it.failure = { step: 'tool', error: event.data.error };
        break;
      }
      case AgentEventType.HumanRequested:
      case AgentEventType.HumanAnswered:
      case AgentEventType.OutputRejected:
      case AgentEventType.AnswerRejected: {
        const exchange = step.envelope.exchanges?.at(-1);
        if (exchange !== undefined) current(event.iteration).exchange = exchange;
        // A rejected answer sent back is the iteration's failure, at its answer, though the run goes on.
        if (event.type === AgentEventType.AnswerRejected) current(event.iteration).failure = { step: 'answer', error: event.data.error };
        break;
      }
      // The final answer's verification: the exchange holds its checks; a failed one is the iteration's failure, at its answer.
      case AgentEventType.VerificationRequested:
      case AgentEventType.VerificationCompleted: {
        const exchange = step.envelope.exchanges?.at(-1);
        const it = current(event.iteration);
        if (exchange !== undefined) it.exchange = exchange;
        if (event.type === AgentEventType.VerificationCompleted && !event.data.passed) it.failure = { step: 'answer', error: verificationError(event.data) };
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
        // A run that ends while a call waits (aborted, or its wait expired) waits no longer.
        const last = iterations.at(-1);
        if (last?.tool?.waiting) last.tool = { ...last.tool, waiting: null };
        markEnding(iterations.at(-1), event.data.outcome, memory);
        break;
      }
      case AgentEventType.RunStarted:
        parent = event.data.parent ?? null;
        break;
    }
  });
  const envelope = steps.at(-1)?.envelope;
  return {
    traceId: envelope?.observability.traceId ?? '',
    startedAt: envelope?.observability.startedAt ?? '',
    input: envelope?.input ?? null,
    parent,
    systemPrompt,
    iterations,
    memory,
    ending,
    resumedAfter,
  };
}

/**
 * An ending with an error (blocked, escalate) is marked on the iteration it ended in, on the step
 * under way then (see {@link FailedStep}), so "why did the run end" has an answer at the step. A
 * failure of the iteration's own (a failed tool call) is kept: the outcome tells the rest.
 */
function markEnding(last: Mutable<IterationDetails> | undefined, outcome: RunOutcome, memory: MemoryStepDetails | null): void {
  if (!last || last.failure || !outcome.error) return;
  last.failure = { step: stepUnderWay(last, memory), error: outcome.error };
}

function stepUnderWay(last: IterationDetails, memory: MemoryStepDetails | null): FailedStep {
  if (memory && memory.savedInMs === null) return 'memory';
  // A tool call without a result was running, or waiting (for an approval, for its client).
  if (last.tool) return last.tool.result === null ? 'tool' : 'ending';
  if (!last.model) return 'model';
  return last.model.verdict.kind === 'rejected' ? 'answer' : 'ending';
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
  if (next.type === AgentEventType.HumanRequested) return { kind: 'ask', action: next.data.action };
  if (next.type === AgentEventType.OutputRejected) return { kind: 'repair' };
  if (next.type === AgentEventType.AnswerRejected) return { kind: 'rejected', error: next.data.error, repaired: true };
  // A final answer that goes to verification first: the iteration's exchange says how that went.
  if (next.type === AgentEventType.VerificationRequested) return { kind: 'final' };
  if (!ending) return { kind: 'pending' };
  const { outcome } = ending.data;
  if (outcome.reason === 'delegated') return { kind: 'delegate', agentId: outcome.handoff?.agentId ?? '' };
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
    switchedModel: switchLine(data) ?? null,
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
    waiting: data.wait?.for ?? null,
    approval: null,
    childTraceId: data.childTraceId ?? null,
    result: null,
  };
}

function toolResult(data: ToolCompletedData): ToolCallDetails['result'] {
  return data.ok
    ? { ok: true, output: data.output ?? null, durationMs: data.durationMs }
    : { ok: false, error: data.error ?? null, durationMs: data.durationMs };
}

/** A failed verification as an error: the verifier's own (an unreadable answer), or the failed checks. */
function verificationError(data: VerificationCompletedData): ErrorInfoData {
  if (data.error !== undefined) return data.error;
  const failed = data.checks.filter((check) => !check.passed).map((check) => `${check.name}: ${check.basis}`);
  return { code: ErrorCode.VERIFICATION_FAILED, message: `the final answer failed verification (${failed.join('; ')})`, hint: 'the model revises it next iteration' };
}
