import type { AgentEnvelope, ErrorInfoData, Exchange, IterationStep, RunOutcome, TokenUsage } from '../contracts/schema-types.js';

// The envelope's parts as the fold builds them (`evolve.ts`, `evolveVerification.ts`): literals with
// explicit optional members, never spread-and-extend (V8's slow path; see evolve.ts).

type Envelope = AgentEnvelope;
type State = AgentEnvelope['state'];
type Model = NonNullable<AgentEnvelope['model']>;
type Observability = AgentEnvelope['observability'];

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
  return next;
}

export function makeState(iteration: number, completed: boolean, lastAction: State['lastAction'], lastTool: string | undefined): State {
  const state: State = { iteration, completed };
  if (lastAction !== undefined) state.lastAction = lastAction;
  if (lastTool !== undefined) state.lastTool = lastTool;
  return state;
}

export function makeModel(lastPrompt: string | undefined, lastResponse: unknown, hasResponse: boolean): Model {
  const model: Model = {};
  if (lastPrompt !== undefined) model.lastPrompt = lastPrompt;
  if (hasResponse) model.lastResponse = lastResponse;
  return model;
}

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

/** A copy of `items` with `item` at the end (cheaper than spreading). */
export function appended<T>(items: readonly T[], item: T): T[] {
  const next = items.slice();
  next.push(item);
  return next;
}

export function replacedLast<T>(items: readonly T[], item: T): T[] {
  const next = items.slice();
  next[next.length - 1] = item;
  return next;
}

export function addUsage(total: TokenUsage | undefined, more: TokenUsage): TokenUsage {
  if (!total) return { promptTokens: more.promptTokens, completionTokens: more.completionTokens, totalTokens: more.totalTokens };
  return {
    promptTokens: total.promptTokens + more.promptTokens,
    completionTokens: total.completionTokens + more.completionTokens,
    totalTokens: total.totalTokens + more.totalTokens,
  };
}
