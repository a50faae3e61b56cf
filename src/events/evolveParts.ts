import type { AgentEnvelope, ErrorInfoData, Exchange, IterationStep, RunEndedData, RunOutcome, TokenUsage } from '../contracts/schema-types.js';
import { ErrorCode } from '../errors.js';
import type { RecordedFact } from './eventTypes.js';

// The envelope's parts as the fold builds them (evolve.ts), and the fold of a verification's two
// events: literals with explicit optional members, never spread-and-extend (V8's slow path; see evolve.ts).

type Envelope = AgentEnvelope;
type State = AgentEnvelope['state'];
type Model = NonNullable<AgentEnvelope['model']>;
type Observability = AgentEnvelope['observability'];

/** An envelope from its parts, keeping the run's input, memory, history and context (`withParts(envelope, envelope.state, envelope.model, envelope.tools, envelope.observability)`). */
export function withParts(
  envelope: Envelope,
  state: State,
  model: Model | undefined,
  tools: Envelope['tools'],
  observability: Observability,
  exchanges: Exchange[] | undefined = envelope.exchanges,
): Envelope {
  const next: Envelope = { input: envelope.input, state, tools, observability };
  if (model !== undefined) next.model = model;
  if (exchanges !== undefined) next.exchanges = exchanges;
  if (envelope.memory !== undefined) next.memory = envelope.memory;
  if (envelope.history !== undefined) next.history = envelope.history;
  if (envelope.context !== undefined) next.context = envelope.context;
  if (envelope.lineage !== undefined) next.lineage = envelope.lineage;
  return next;
}

/** The envelope's `state`, its optional members set only when given (`makeState(2, false, 'tool', 'lookup')`). */
export function makeState(iteration: number, completed: boolean, lastAction: State['lastAction'], lastTool: string | undefined): State {
  const state: State = { iteration, completed };
  if (lastAction !== undefined) state.lastAction = lastAction;
  if (lastTool !== undefined) state.lastTool = lastTool;
  return state;
}

/** The envelope's `model`: the last prompt, and the last response when there is one (`makeModel(prompt, answer, true)`). */
export function makeModel(lastPrompt: string | undefined, lastResponse: unknown, hasResponse: boolean): Model {
  const model: Model = {};
  if (lastPrompt !== undefined) model.lastPrompt = lastPrompt;
  if (hasResponse) model.lastResponse = lastResponse;
  return model;
}

/** The envelope's `observability` with new timeline lines, usage and outcome (`makeObservability(obs, events, obs.usage, outcome)`). */
export function makeObservability(
  obs: Observability,
  events: IterationStep[],
  usage: TokenUsage | undefined,
  outcome: RunOutcome | undefined,
): Observability {
  const next: Observability = { traceId: obs.traceId, startedAt: obs.startedAt, events };
  if (usage !== undefined) next.usage = usage;
  if (outcome !== undefined) next.outcome = outcome;
  return next;
}

/** One line of the timeline (`makeStep(2, 'tool', 'lookup', 0.8, 12, undefined)`). */
export function makeStep(
  iteration: number,
  action: IterationStep['action'],
  tool: string | undefined,
  confidence: number | undefined,
  durationMs: number | undefined,
  code: ErrorInfoData['code'] | undefined,
): IterationStep {
  const step: IterationStep = { iteration, action };
  if (tool !== undefined) step.tool = tool;
  if (durationMs !== undefined) step.durationMs = durationMs;
  if (confidence !== undefined) step.confidence = confidence;
  if (code !== undefined) step.code = code;
  return step;
}

/**
 * The timeline line of `iteration` when it is the last one and still open (its model answered,
 * maybe its tool ran); otherwise the change belongs to a new line (a failure before any answer).
 */
export function openStep(events: readonly IterationStep[], iteration: number): IterationStep | undefined {
  const last = events[events.length - 1];
  return last && last.iteration === iteration && (last.action === 'model' || last.action === 'tool') ? last : undefined;
}

/** A copy of `items` with `item` at the end, cheaper than spreading (`appended([1], 2)` is `[1, 2]`). */
export function appended<T>(items: readonly T[], item: T): T[] {
  const next = items.slice();
  next.push(item);
  return next;
}

/** A copy of `items` with its last one replaced (`replacedLast([1, 2], 3)` is `[1, 3]`). */
export function replacedLast<T>(items: readonly T[], item: T): T[] {
  const next = items.slice();
  next[next.length - 1] = item;
  return next;
}

/** Token usage added up (`addUsage(total, answer.usage)`). */
export function addUsage(total: TokenUsage | undefined, more: TokenUsage): TokenUsage {
  const sum: TokenUsage = total
    ? { promptTokens: total.promptTokens + more.promptTokens, completionTokens: total.completionTokens + more.completionTokens, totalTokens: total.totalTokens + more.totalTokens }
    : { promptTokens: more.promptTokens, completionTokens: more.completionTokens, totalTokens: more.totalTokens };
  // A sum with one estimated part is an estimate; a cost is kept once any call had a price.
  if (total?.estimated === true || more.estimated === true) sum.estimated = true;
  if (total?.costUsd !== undefined || more.costUsd !== undefined) sum.costUsd = (total?.costUsd ?? 0) + (more.costUsd ?? 0);
  return sum;
}

// The fold of a verification's two events (docs/verification.md), kept apart from evolve.ts, which
// calls these. The pending verification is an exchange of kind `verification`: its `output` is the
// ending the answer would have (logged in `verification.requested`), so a resumed run verifies,
// and ends with, the same answer; once answered it holds the checks, and a failed one is the
// model's next observation.

type Requested = Extract<RecordedFact, { type: 'verification.requested' }>;
type Completed = Extract<RecordedFact, { type: 'verification.completed' }>;

/**
 * The envelope after `verification.requested`: the answer waits for its verification.
 *
 * @example
 * ```ts
 * const next = verificationRequested(envelope, { type: 'verification.requested', iteration: 2, data: { candidate } });
 * next.exchanges?.at(-1)?.status // 'waiting'
 * ```
 */
export function verificationRequested(envelope: AgentEnvelope, event: Requested): AgentEnvelope {
  const exchange: Exchange = { iteration: event.iteration, kind: 'verification', status: 'waiting', output: event.data.candidate };
  return withParts(envelope, envelope.state, envelope.model, envelope.tools, envelope.observability, appended(envelope.exchanges ?? [], exchange));
}

/**
 * The envelope after `verification.completed`: the pending verification holds its checks. A failed
 * one closes the iteration's timeline line as a final answer marked with the failure's code (the
 * model revises next); a passed one leaves the line open for the run's ending.
 *
 * @example
 * ```ts
 * const next = verificationCompleted(envelope, { type: 'verification.completed', iteration: 2, data: { passed: false, checks, durationMs: 5 } });
 * next.observability.events.at(-1)?.code // 'VERIFICATION_FAILED'
 * ```
 */
export function verificationCompleted(envelope: AgentEnvelope, event: Completed): AgentEnvelope {
  const { data } = event;
  const exchanges = envelope.exchanges ?? [];
  const pending = exchanges[exchanges.length - 1];
  if (pending === undefined || pending.kind !== 'verification' || pending.status !== 'waiting') return envelope;
  const done: Exchange = { iteration: pending.iteration, kind: 'verification', status: 'answered', output: pending.output, checks: data.checks.slice() };
  if (data.error !== undefined) done.error = data.error;
  const obs = envelope.observability;
  const usage = data.usage === undefined ? obs.usage : addUsage(obs.usage, data.usage);
  const last = openStep(obs.events, event.iteration);
  const durationMs = last === undefined ? data.durationMs : (last.durationMs ?? 0) + data.durationMs;
  if (data.passed) {
    const step = makeStep(event.iteration, last?.action ?? 'model', last?.tool, last?.confidence, durationMs, last?.code);
    const events = last ? replacedLast(obs.events, step) : appended(obs.events, step);
    return withParts(envelope, envelope.state, envelope.model, envelope.tools, makeObservability(obs, events, usage, obs.outcome), replacedLast(exchanges, done));
  }
  const code = data.error === undefined ? ErrorCode.VERIFICATION_FAILED : ErrorCode.VERIFICATION_INVALID;
  const step = makeStep(event.iteration, 'final', undefined, last?.confidence, durationMs, code);
  const events = last ? replacedLast(obs.events, step) : appended(obs.events, step);
  return withParts(
    envelope,
    makeState(envelope.state.iteration, envelope.state.completed, 'final', envelope.state.lastTool),
    makeModel(envelope.model?.lastPrompt, candidateAnswer(pending.output as RunEndedData | undefined), true),
    envelope.tools,
    makeObservability(obs, events, usage, obs.outcome),
    replacedLast(exchanges, done),
  );
}

/** The final answer a candidate ending stands for, as the model gave it. */
function candidateAnswer(candidate: RunEndedData | undefined): Record<string, unknown> {
  const answer: Record<string, unknown> = { action: 'final' };
  const outcome = candidate?.outcome;
  if (outcome?.answer !== undefined) answer.message = outcome.answer;
  if (outcome?.output !== undefined) answer.output = outcome.output;
  return answer;
}
