import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { loadValidFlow } from '../flows/loadValidFlow.js';
import type { EvalCase } from './caseFile.js';
import { judgeAnswer } from './judge.js';
import { totals, type CaseRow, type EvalReport, type EvalSeam, type ReportedRun } from './report.js';
import { runCost, scoreRun, type JudgeVerdict } from './scoreRun.js';
import { seamLauncher } from './seams.js';
import type { EvalFork, SeamLauncher, SeamOutcome } from './seamTypes.js';
import { isBroken, loadSuite } from './suite.js';
import { summarizeRun, type RunSummary } from './runSummary.js';

/**
 * Options of {@link runEvalSuite}.
 *
 * @example
 * ```ts
 * const options: EvalSuiteOptions = { suite: 'evals/orders', flowPath: 'flow.changed.json', concurrency: 2, outDir: 'evals/runs' };
 * ```
 */
export interface EvalSuiteOptions {
  /** The suite's folder. */
  readonly suite: string;
  /** The changed flow every case runs; default each case's recorded flow (`run.started`'s `flow.path`). */
  readonly flowPath?: string;
  /** Where the eval runs start (default `start`; see {@link EvalSeam}). */
  readonly seam?: EvalSeam;
  /** How many cases run at once (default 1). */
  readonly concurrency?: number;
  /** The folder of the eval runs' logs and judges' logs (default `.redflow/evals/<suite>-<time>`). */
  readonly outDir?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Folders besides the flow file's own where the files it names may be. */
  readonly allowFiles?: readonly string[];
  /** Ends a case's eval run as `timeout` after this long. */
  readonly caseTimeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Told of each case as it finishes, with how many are done and how many there are. */
  readonly onCase?: (row: CaseRow, done: number, total: number) => void;
  /**
   * Makes each case's eval run as a fork elsewhere (`redflow eval --nats`: on a cluster) instead of
   * a run of this process; the report is the same.
   */
  readonly fork?: EvalFork;
  /** The clock of the report's times (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * Runs a suite: each case's eval run (from its seam, against the changed flow), scored against the
 * case's expectations; a case that cannot be read, run or scored is an error row, and the rest of
 * the suite still runs. Each eval run is a run with its own log in `outDir`.
 *
 * @throws RedflowError `EVAL_SUITE_NOT_FOUND`; `EVAL_SEAM_UNAVAILABLE`; `EVAL_OUT_DIR_NOT_EMPTY` when
 *   `outDir` holds logs already; the flow's own errors
 *   (`FLOW_*`) when the changed flow cannot be loaded.
 *
 * @example
 * ```ts
 * const report = await runEvalSuite({ suite: 'evals/orders', flowPath: 'flow.changed.json', concurrency: 4 });
 * console.log(report.score, report.counts);
 * ```
 */
export async function runEvalSuite(options: EvalSuiteOptions): Promise<EvalReport> {
  const now = options.now ?? Date.now;
  const startedAt = new Date(now()).toISOString();
  const seam = options.seam ?? 'start';
  const launch = seamLauncher(seam);
  // A changed flow that does not load fails every case the same way: said once, before any runs.
  if (options.flowPath !== undefined) await loadValidFlow(options.flowPath, undefined, options.allowFiles);
  const suite = await loadSuite(options.suite);
  const outDir = path.resolve(options.outDir ?? path.join('.redflow', 'evals', `${path.basename(suite.dir)}-${startedAt.replace(/[:.]/g, '-')}`));
  await mkdir(outDir, { recursive: true });
  // An eval run's log is never written over, nor mixed with another suite run's.
  if ((await readdir(outDir)).some((name) => name.endsWith('.jsonl'))) {
    throw new RedflowError(
      errorInfo(ErrorCode.EVAL_OUT_DIR_NOT_EMPTY, `the output folder ${options.outDir ?? outDir} holds the logs of earlier eval runs`, {
        hint: 'give another --out folder, or remove the old one (each eval run writes <case>.jsonl there)',
      }),
    );
  }
  const rows: CaseRow[] = new Array<CaseRow>(suite.cases.length);
  let done = 0;
  const scoreOne = async (index: number): Promise<void> => {
    const entry = suite.cases[index] as (typeof suite.cases)[number];
    const begun = now();
    const row = isBroken(entry)
      ? { name: entry.name, result: 'error' as const, score: 0, checks: [], error: entry.error, durationMs: 0 }
      : await evaluateCase(entry, { ...options, outDir, launch, baseDir: suite.dir }).then((scored) => ({ ...scored, durationMs: Math.max(0, now() - begun) }));
    rows[index] = row;
    done++;
    options.onCase?.(row, done, suite.cases.length);
  };
  await inParallel(suite.cases.length, Math.max(1, options.concurrency ?? 1), scoreOne);
  return {
    version: 1,
    suite: suite.dir,
    ...(options.flowPath !== undefined && { flow: path.resolve(options.flowPath) }),
    seam,
    outDir,
    startedAt,
    finishedAt: new Date(now()).toISOString(),
    ...totals(rows),
    cases: rows,
  };
}

interface CaseContext extends EvalSuiteOptions {
  readonly outDir: string;
  readonly launch: SeamLauncher;
  readonly baseDir: string;
}

/** Runs and scores one case; whatever fails makes it an error row (with what was known). */
async function evaluateCase(evalCase: EvalCase, context: CaseContext): Promise<Omit<CaseRow, 'durationMs'>> {
  const price = evalCase.expectations.limits?.price;
  const recorded = { ...reported(evalCase.recorded, price), log: evalCase.logFile };
  const logPath = path.join(context.outDir, `${evalCase.name}.jsonl`);
  const errorRow = (error: unknown, extra: Partial<CaseRow> = {}) => ({
    name: evalCase.name,
    result: 'error' as const,
    score: 0,
    checks: [],
    error: toErrorInfo(error, ErrorCode.EVAL_CASE_INVALID),
    recorded,
    ...extra,
  });
  const flowPath = context.flowPath ?? evalCase.recorded.flowPath;
  if (flowPath === undefined) {
    return errorRow(new RedflowError(errorInfo(ErrorCode.EVAL_CASE_LOG_INVALID, `case "${evalCase.name}": its log names no flow file to run`, { hint: 'give the flow to run with --flow' })));
  }
  let summary: RunSummary;
  let forked: SeamOutcome | void;
  try {
    forked = await context.launch({
      evalCase,
      flowPath,
      logPath,
      ...(context.env !== undefined && { env: context.env }),
      ...(context.allowFiles !== undefined && { allowFiles: context.allowFiles }),
      ...(context.caseTimeoutMs !== undefined && { timeoutMs: context.caseTimeoutMs }),
      ...(context.signal !== undefined && { signal: context.signal }),
      ...(context.fork !== undefined && { fork: context.fork }),
    });
    summary = summarizeRun((await readJsonlLog(logPath)).events);
  } catch (error) {
    return errorRow(error);
  }
  const evalRun = { ...reported(summary, price), log: logPath };
  if (evalCase.expectations.limits?.cost !== undefined && evalRun.costUsd === undefined) return errorRow(noPrice(evalCase.name, summary), { eval: evalRun });
  const judge = evalCase.expectations.answer?.judge;
  let judged: (JudgeVerdict & { tokens: number }) | undefined;
  const judgeLog = judge === undefined ? undefined : path.join(context.outDir, `${evalCase.name}.judge.json`);
  if (judge !== undefined) {
    try {
      judged = await judgeAnswer(
        judge,
        { caseName: evalCase.name, input: evalCase.recorded.input, answer: summary.answer, recordedAnswer: evalCase.recorded.answer },
        { baseDir: context.baseDir, ...(context.env !== undefined && { env: context.env }), ...(context.signal !== undefined && { signal: context.signal }), ...(judgeLog !== undefined && { logFile: judgeLog }) },
      );
    } catch (error) {
      return errorRow(error, { eval: evalRun, ...(judgeLog !== undefined && { judgeLog }) });
    }
  }
  const scored = scoreRun(summary, evalCase.expectations, judged === undefined ? {} : { judged });
  return {
    name: evalCase.name,
    result: scored.pass ? 'pass' : 'fail',
    score: scored.score,
    checks: scored.checks,
    recorded,
    eval: evalRun,
    ...(forked !== undefined && { fork: { atIteration: forked.forkedAt, toolCalls: forked.toolCalls } }),
    ...(judged !== undefined && { judgeTokens: judged.tokens }),
    ...(judgeLog !== undefined && { judgeLog }),
  };
}

/** A run as its row shows it, its cost at the case's price when the case gives one (over the flow's budget's). */
function reported(summary: RunSummary, price: { readonly input: number; readonly output: number } | undefined): ReportedRun {
  // The input is the case's, shown once; the flow is the report's.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { input, flowPath, costUsd, ...rest } = summary;
  const cost = runCost(summary, price);
  return cost === undefined ? rest : { ...rest, costUsd: cost };
}

/** A cost limit with nothing to price the run by: the case is an error, the suite goes on. */
function noPrice(name: string, summary: RunSummary): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.EVAL_CASE_NO_PRICE, `case "${name}": its limits.cost cannot be checked: neither the case nor the flow's budget prices the eval run's model (${summary.tokens} tokens)`, {
      hint: 'give the case limits.price: { input: <USD per million tokens>, output: <USD per million tokens> }, or the flow\'s agent budget.prices for its model',
      path: '/limits/cost',
    }),
  );
}

/** Calls `work(i)` for i in [0, count), at most `limit` at a time. */
async function inParallel(count: number, limit: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}
