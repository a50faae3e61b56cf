import type { EvalExpectations, LimitsExpectation } from './expectations.js';
import type { RunSummary } from './runSummary.js';
import { toolPathCredit } from './toolPath.js';
import { checkAnswer, clip, type CheckResult } from './answerChecks.js';

export type { CheckResult } from './answerChecks.js';

/**
 * A judge's verdict on an answer (see `judgeAnswer`).
 *
 * @example
 * ```ts
 * const judged: JudgeVerdict = { score: 0.8, pass: true, reason: 'names the carrier' };
 * scoreRun(summary, expectations, { judged });
 * ```
 */
export interface JudgeVerdict {
  readonly score: number;
  readonly pass: boolean;
  readonly reason: string;
}

/**
 * How a run scored against a case's expectations.
 *
 * @example
 * ```ts
 * const { score, pass, checks }: RunScore = scoreRun(summary, { status: 'done' });
 * ```
 */
export interface RunScore {
  /** The mean of the checks' scores, in [0, 1] (1 when nothing is checked). */
  readonly score: number;
  /** Whether every check passed. */
  readonly pass: boolean;
  readonly checks: readonly CheckResult[];
}

/**
 * Scores a run (its {@link RunSummary}) against a case's expectations: the final answer (exact,
 * contains, regex, schema, and the judge's verdict when one was asked), the tool path (an ordered
 * subsequence, with partial credit), the outcome's status and the limits. Pure: the judge's
 * verdict is given, not asked for here.
 *
 * @example
 * ```ts
 * const { score, pass, checks } = scoreRun(summarizeRun(events), { tools: ['lookup_order', 'track_shipment'], status: 'done' });
 * ```
 */
export function scoreRun(run: RunSummary, expectations: EvalExpectations, options: { readonly judged?: JudgeVerdict } = {}): RunScore {
  const checks: CheckResult[] = [];
  if (expectations.answer !== undefined) checks.push(...checkAnswer(expectations.answer, run.answer, run.output));
  if (expectations.answer?.judge !== undefined) {
    const verdict = options.judged;
    checks.push(
      verdict === undefined
        ? { name: 'answer.judge', pass: false, score: 0, detail: 'the judge gave no verdict' }
        : { name: 'answer.judge', pass: verdict.pass, score: verdict.score, detail: clip(verdict.reason) },
    );
  }
  if (expectations.tools !== undefined) checks.push(checkTools(expectations.tools, run.tools));
  if (expectations.status !== undefined) {
    const allowed = typeof expectations.status === 'string' ? [expectations.status] : expectations.status;
    const pass = allowed.includes(run.status);
    checks.push({ name: 'status', pass, score: pass ? 1 : 0, detail: `the run ended ${run.status}${run.reason ? ` (${run.reason})` : ''}${pass ? '' : `, not ${allowed.join(' or ')}`}` });
  }
  if (expectations.limits !== undefined) checks.push(...checkLimits(expectations.limits, run));
  const score = checks.length === 0 ? 1 : checks.reduce((sum, check) => sum + check.score, 0) / checks.length;
  return { score, pass: checks.every((check) => check.pass), checks };
}

function checkTools(expected: readonly string[], actual: readonly string[]): CheckResult {
  const credit = toolPathCredit(expected, actual);
  const called = actual.length === 0 ? 'no tool' : actual.join(' → ');
  return {
    name: 'tools',
    pass: credit === 1,
    score: credit,
    detail: credit === 1 ? `called ${called}` : `called ${called}; expected ${expected.join(' → ')} (${Math.round(credit * expected.length)}/${expected.length} in order)`,
  };
}

function checkLimits(limits: LimitsExpectation, run: RunSummary): CheckResult[] {
  const measured = { iterations: run.iterations, tokens: run.tokens, durationMs: run.durationMs };
  const checks = (Object.keys(measured) as (keyof typeof measured)[])
    .filter((name) => limits[name] !== undefined)
    .map((name) => {
      const limit = limits[name] as number;
      const pass = measured[name] <= limit;
      return { name: `limits.${name}`, pass, score: pass ? 1 : 0, detail: `${measured[name]} ${name} (limit ${limit})` };
    });
  if (limits.cost === undefined) return checks;
  const cost = runCost(run, limits.price);
  const pass = cost !== undefined && cost <= limits.cost;
  const spent = cost === undefined ? 'no price for its model' : `$${dollars(cost)}`;
  return [...checks, { name: 'limits.cost', pass, score: pass ? 1 : 0, detail: `${spent} (limit $${limits.cost})` }];
}

/**
 * What a run cost in US dollars: its tokens at `price` (US dollars per million input and output
 * tokens) when one is given, else what the flow's budget priced it at; undefined when neither.
 *
 * @example
 * ```ts
 * runCost(summary, { input: 0.15, output: 0.6 }); // 0.000123
 * ```
 */
export function runCost(run: Pick<RunSummary, 'promptTokens' | 'completionTokens' | 'costUsd'>, price?: { readonly input: number; readonly output: number }): number | undefined {
  return price === undefined ? run.costUsd : (run.promptTokens * price.input + run.completionTokens * price.output) / 1e6;
}

/** Dollars with four significant digits, as a cost is shown. */
export function dollars(cost: number): string {
  return String(Number(cost.toPrecision(4)));
}
