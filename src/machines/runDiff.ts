/** Two runs compared iteration by iteration (`redflow diff`, the eval report's diffs, the HTTP API's diff route). Pure: no I/O. */
import type { RunOutcome } from '../contracts/schema-types.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { runDetails, type IterationDetails, type RunDetails } from './stepDetails.js';

/**
 * What {@link diffRuns} compares, in the order it compares them: per iteration the model's decision,
 * the tool called, its input, what came back (the observation) and the model's tokens; then the
 * run's outcome (status, reason, answer). Ids, timestamps and durations are never compared.
 */
export const DIFF_FIELDS = ['decision', 'tool', 'input', 'observation', 'tokens', 'status', 'reason', 'answer'] as const;

/**
 * One of {@link DIFF_FIELDS}.
 *
 * @example
 * ```ts
 * const field: DiffField = 'observation'; // the tool's result (or a person's answer) differs
 * ```
 */
export type DiffField = (typeof DIFF_FIELDS)[number];

/** The fields compared per iteration; the rest belong to the outcome. */
const ITERATION_FIELDS = ['decision', 'tool', 'input', 'observation', 'tokens'] as const satisfies readonly DiffField[];
const OUTCOME_FIELDS = ['status', 'reason', 'answer'] as const satisfies readonly DiffField[];

/** A field compared per iteration. */
export type IterationField = (typeof ITERATION_FIELDS)[number];
/** A field of the outcome. */
export type OutcomeField = (typeof OUTCOME_FIELDS)[number];

/** One run's side of an iteration: what is compared, and the durations, shown only. */
export interface IterationSide {
  /**
   * What the core made of the model's answer: `tool`, `final`, `ask (escalate)`, `repair`,
   * `rejected (CODE)`, `delegate (agent)`, `ended (reason)`, `pending`; `model failed (CODE)` when
   * the call failed.
   */
  readonly decision: string;
  readonly tool: string | null;
  readonly input: unknown;
  /** The tool's result (`{ ok, output }`, or `{ ok: false, code }`), or a person's answer; null when none. */
  readonly observation: unknown;
  readonly tokens: { readonly prompt: number; readonly completion: number } | null;
  /** How long the model call took (shown, never compared). */
  readonly modelMs: number | null;
  /** How long the tool call took (shown, never compared). */
  readonly toolMs: number | null;
}

/**
 * One iteration of the two runs side by side; a side is null when that run has no such iteration.
 *
 * @example
 * ```ts
 * for (const it of diffRuns(a, b).iterations) console.log(it.iteration, it.a?.tool, it.b?.tool, it.differences);
 * ```
 */
export interface IterationDiff {
  readonly iteration: number;
  readonly a: IterationSide | null;
  readonly b: IterationSide | null;
  /** The fields that differ, in {@link DIFF_FIELDS} order; empty when the iteration is the same. */
  readonly differences: readonly IterationField[];
}

/** How a run ended, as compared; null while the log stops before its ending. */
export interface OutcomeSide {
  readonly status: RunOutcome['status'];
  readonly reason: RunOutcome['reason'];
  readonly answer: string | null;
}

/**
 * A point where the runs differ, with each run's value there. `iteration` is null for the outcome.
 *
 * @example
 * ```ts
 * const first: Difference | null = diffRuns(a, b).first; // { iteration: 2, field: 'input', a: { orderId: 'A-1' }, b: { orderId: 'A-2' } }
 * ```
 */
export interface Difference {
  readonly iteration: number | null;
  readonly field: DiffField;
  readonly a: unknown;
  readonly b: unknown;
}

/** One run as the diff read it. */
export interface DiffedRun {
  readonly traceId: string;
  readonly events: number;
  /** Event types this version does not know (a newer writer's), left out of the comparison. */
  readonly ignoredEventTypes: readonly string[];
}

/**
 * Two runs compared: `same` when no field differs, the `first` difference in run order (iteration
 * by iteration, then the outcome), and every iteration side by side.
 *
 * @example
 * ```ts
 * const diff: RunDiff = diffRuns(a, b);
 * if (!diff.same) console.log(diff.first, diff.outcome.differences);
 * ```
 */
export interface RunDiff {
  readonly same: boolean;
  readonly first: Difference | null;
  readonly iterations: readonly IterationDiff[];
  readonly outcome: { readonly a: OutcomeSide | null; readonly b: OutcomeSide | null; readonly differences: readonly OutcomeField[] };
  readonly runs: { readonly a: DiffedRun; readonly b: DiffedRun };
}

/**
 * Compares two runs' logs iteration by iteration (iteration n of one with iteration n of the
 * other) and then their outcomes. It reports the first point where they differ and every
 * iteration side by side. Ids, timestamps and durations never count as a difference (durations
 * are shown); event types it does not know are left out and named in `runs`.
 *
 * @example
 * ```ts
 * import { diffRuns } from 'redflow/evals';
 * const diff = diffRuns(recorded.events, changed.events);
 * if (diff.first) console.log(`first differs at #${diff.first.iteration}: ${diff.first.field}`);
 * ```
 */
export function diffRuns(a: readonly AgentEvent[], b: readonly AgentEvent[]): RunDiff {
  const [runA, detailsA] = read(a);
  const [runB, detailsB] = read(b);
  const sidesA = new Map(detailsA.iterations.map((it) => [it.iteration, iterationSide(it)]));
  const sidesB = new Map(detailsB.iterations.map((it) => [it.iteration, iterationSide(it)]));
  const numbers = [...new Set([...sidesA.keys(), ...sidesB.keys()])].sort((x, y) => x - y);
  const iterations = numbers.map((iteration): IterationDiff => {
    const sideA = sidesA.get(iteration) ?? null;
    const sideB = sidesB.get(iteration) ?? null;
    const differences = ITERATION_FIELDS.filter((field) => !sameValue(sideA?.[field] ?? null, sideB?.[field] ?? null) && !(field === 'tokens' && unreported(sideA, sideB)));
    return { iteration, a: sideA, b: sideB, differences };
  });
  const outcomeA = outcomeSide(detailsA);
  const outcomeB = outcomeSide(detailsB);
  const outcomeDifferences = OUTCOME_FIELDS.filter((field) => !sameValue(outcomeA?.[field] ?? null, outcomeB?.[field] ?? null));
  const first = firstDifference(iterations, { a: outcomeA, b: outcomeB, differences: outcomeDifferences });
  return { same: first === null, first, iterations, outcome: { a: outcomeA, b: outcomeB, differences: outcomeDifferences }, runs: { a: runA, b: runB } };
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(Object.values(AgentEventType));

/** A log's known events read step by step; unknown types (a newer writer's, e.g. a fork's marker) are set aside. */
function read(events: readonly AgentEvent[]): [DiffedRun, RunDetails] {
  const known = events.filter((event) => KNOWN_TYPES.has(event.type));
  const ignored = [...new Set(events.filter((event) => !KNOWN_TYPES.has(event.type)).map((event) => event.type as string))];
  const details = runDetails(known);
  return [{ traceId: details.traceId || (events[0]?.traceId ?? ''), events: events.length, ignoredEventTypes: ignored }, details];
}

/**
 * Tokens one side's model did not report (a scripted model, a server that sends no usage) say
 * nothing about what the run did: compared only when both runs have them, or a run recorded with
 * a scripted model would part from every live one at its first call.
 */
function unreported(a: IterationSide | null, b: IterationSide | null): boolean {
  return a !== null && b !== null && (a.tokens === null || b.tokens === null);
}

function firstDifference(iterations: readonly IterationDiff[], outcome: RunDiff['outcome']): Difference | null {
  for (const it of iterations) {
    const [field] = it.differences;
    if (field !== undefined) return { iteration: it.iteration, field, a: valueOf(it.a, field), b: valueOf(it.b, field) };
  }
  const [field] = outcome.differences;
  if (field === undefined) return null;
  return { iteration: null, field, a: valueOf(outcome.a, field), b: valueOf(outcome.b, field) };
}

function valueOf(side: IterationSide | OutcomeSide | null, field: DiffField): unknown {
  if (side === null) return null;
  return (side as unknown as Record<string, unknown>)[field] ?? null;
}

function iterationSide(it: IterationDetails): IterationSide {
  const { model, tool, exchange } = it;
  const result = tool?.result ?? null;
  let observation: unknown = null;
  if (result) observation = result.ok ? { ok: true, output: result.output } : { ok: false, code: result.error?.code ?? null };
  else if (exchange?.answer !== undefined) observation = { answered: exchange.answer };
  return {
    decision: decisionOf(it),
    tool: tool?.tool ?? null,
    input: tool ? tool.input : null,
    observation,
    tokens: model?.usage ? { prompt: model.usage.promptTokens, completion: model.usage.completionTokens } : null,
    modelMs: model?.durationMs ?? null,
    toolMs: result?.durationMs ?? null,
  };
}

function decisionOf(it: IterationDetails): string {
  const verdict = it.model?.verdict;
  if (!verdict) return it.failure?.step === 'model' ? `model failed (${it.failure.error?.code ?? 'no error logged'})` : 'none';
  switch (verdict.kind) {
    case 'ask':
      return `ask (${verdict.action})`;
    case 'delegate':
      return `delegate (${verdict.agentId})`;
    case 'ended':
      return `ended (${verdict.reason})`;
    case 'rejected':
      return `rejected (${verdict.error?.code ?? 'no error logged'})`;
    default:
      return verdict.kind;
  }
}

function outcomeSide(details: RunDetails): OutcomeSide | null {
  const outcome = details.ending?.outcome;
  if (!outcome) return null;
  return { status: outcome.status, reason: outcome.reason, answer: outcome.answer ?? null };
}

/** Equal as JSON values, whatever the order of object keys. */
function sameValue(x: unknown, y: unknown): boolean {
  return canonical(x) === canonical(y);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(inner).sort()) sorted[key] = (inner as Record<string, unknown>)[key];
    return sorted;
  }) ?? 'undefined';
}
