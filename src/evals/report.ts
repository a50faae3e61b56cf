import type { ErrorInfo } from '../errors.js';
import type { CheckResult } from './scoreRun.js';
import type { RunSummary } from './runSummary.js';

/**
 * Where a case's eval run starts. `start`: the changed flow runs live from the beginning with the
 * recorded run's input. `model` (one model call under test after the replayed prefix) and `all`
 * (the rest of the run live after the prefix) need forked runs and come with them.
 *
 * @example
 * ```ts
 * const seam: EvalSeam = 'start';
 * await runEvalSuite({ suite: 'evals/orders', seam });
 * ```
 */
export type EvalSeam = 'start' | 'model' | 'all';

/** A run as a report shows it: its summary without the input (the case's row names it once). */
export type ReportedRun = Omit<RunSummary, 'input' | 'flowPath'>;

/**
 * One row of a report: a case, scored, or an error.
 *
 * @example
 * ```ts
 * for (const row of report.cases) if (row.result !== 'pass') console.log(row.name, row.error?.code ?? row.checks.filter((c) => !c.pass).map((c) => c.name));
 * ```
 */
export interface CaseRow {
  readonly name: string;
  /** `pass` when every check passed, `fail` when one did not, `error` when the case could not be run or scored. */
  readonly result: 'pass' | 'fail' | 'error';
  /** In [0, 1]; 0 for an error row. */
  readonly score: number;
  readonly checks: readonly CheckResult[];
  readonly error?: ErrorInfo;
  /** The recorded run of the case, and its log (what `redflow diff` compares the eval run with). */
  readonly recorded?: ReportedRun & { readonly log?: string };
  /** The eval run, and its log. */
  readonly eval?: ReportedRun & { readonly log: string };
  /** Tokens the judge's call used, when there was one (its call is logged in `judgeLog`). */
  readonly judgeTokens?: number;
  readonly judgeLog?: string;
  /** How long the case took to run and score. */
  readonly durationMs: number;
  /**
   * For the seams that fork the recorded run (`model`, `all`): the iteration the eval run went
   * live from, and for each tool call from there whether the record answered it (`recorded`: same
   * tool and input) or the tool ran (`live`).
   */
  readonly fork?: { readonly atIteration: number; readonly toolCalls: readonly { readonly iteration: number; readonly tool: string; readonly source: 'recorded' | 'live' }[] };
}

/**
 * What `redflow eval` and {@link runEvalSuite} produce: one row per case, the suite's score (the
 * mean of the cases' scores, an error counting 0) and its tokens beside the recorded runs'.
 *
 * @example
 * ```ts
 * const report: EvalReport = await runEvalSuite({ suite: 'evals/orders' });
 * console.log(report.score, report.counts.failed, report.tokens.eval);
 * ```
 */
export interface EvalReport {
  readonly version: 1;
  /** The suite's folder. */
  readonly suite: string;
  /** The flow the cases ran against, when one was given (else each case's recorded flow). */
  readonly flow?: string;
  readonly seam: EvalSeam;
  /** Where the eval runs' logs are. */
  readonly outDir: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly score: number;
  readonly counts: { readonly total: number; readonly passed: number; readonly failed: number; readonly errors: number };
  /** Tokens of the recorded runs, of the eval runs and of the judges' calls, summed over the suite. */
  readonly tokens: { readonly recorded: number; readonly eval: number; readonly judge: number };
  /** US dollars of the recorded and the eval runs, summed over the cases whose runs have a price; absent when none has. */
  readonly cost?: { readonly recorded: number; readonly eval: number };
  readonly cases: readonly CaseRow[];
}

/** The mean score and the counts of a set of rows. */
export function totals(rows: readonly CaseRow[]): Pick<EvalReport, 'score' | 'counts' | 'tokens' | 'cost'> {
  const count = (result: CaseRow['result']) => rows.filter((row) => row.result === result).length;
  const sum = (pick: (row: CaseRow) => number | undefined) => rows.reduce((total, row) => total + (pick(row) ?? 0), 0);
  return {
    score: rows.length === 0 ? 0 : sum((row) => row.score) / rows.length,
    counts: { total: rows.length, passed: count('pass'), failed: count('fail'), errors: count('error') },
    tokens: { recorded: sum((row) => row.recorded?.tokens), eval: sum((row) => row.eval?.tokens), judge: sum((row) => row.judgeTokens) },
    ...(rows.some((row) => row.eval?.costUsd !== undefined || row.recorded?.costUsd !== undefined) && {
      cost: { recorded: sum((row) => row.recorded?.costUsd), eval: sum((row) => row.eval?.costUsd) },
    }),
  };
}

/**
 * A report's verdict against a threshold and a baseline report.
 *
 * @example
 * ```ts
 * const verdict: ReportVerdict = judgeReport(report, { baseline });
 * for (const r of verdict.regressions) console.log(`${r.name}: ${r.baseline} → ${r.score}`);
 * ```
 */
export interface ReportVerdict {
  readonly ok: boolean;
  /** Why not, one line each: below the threshold, below the baseline. */
  readonly reasons: readonly string[];
  /** Cases whose score fell from the baseline's, with both scores. */
  readonly regressions: readonly { readonly name: string; readonly baseline: number; readonly score: number }[];
}

/** Scores compare to this precision, so a mean's rounding never fails a build. */
const EPSILON = 1e-9;

/**
 * Judges a report: not ok when its score is below `minScore`, or below the `baseline` report's
 * score. The cases that scored lower than in the baseline are listed either way.
 *
 * @example
 * ```ts
 * const verdict = judgeReport(report, { minScore: 0.8, baseline: previous });
 * if (!verdict.ok) process.exitCode = 1;
 * ```
 */
export function judgeReport(report: Pick<EvalReport, 'score' | 'cases'>, options: { readonly minScore?: number; readonly baseline?: Pick<EvalReport, 'score' | 'cases'> }): ReportVerdict {
  const reasons: string[] = [];
  if (options.minScore !== undefined && report.score + EPSILON < options.minScore) {
    reasons.push(`the score ${formatScore(report.score)} is below --min-score ${formatScore(options.minScore)}`);
  }
  const regressions: { name: string; baseline: number; score: number }[] = [];
  if (options.baseline !== undefined) {
    if (report.score + EPSILON < options.baseline.score) reasons.push(`the score ${formatScore(report.score)} is below the baseline's ${formatScore(options.baseline.score)}`);
    const before = new Map(options.baseline.cases.map((row) => [row.name, row.score]));
    for (const row of report.cases) {
      const baseline = before.get(row.name);
      if (baseline !== undefined && row.score + EPSILON < baseline) regressions.push({ name: row.name, baseline, score: row.score });
    }
  }
  return { ok: reasons.length === 0, reasons, regressions };
}

/** A score as the reports print it: three decimals. */
export function formatScore(score: number): string {
  return score.toFixed(3);
}
