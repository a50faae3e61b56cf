/**
 * Eval suites (`redflow/evals`): recorded runs with expectations, run again against a changed
 * flow and scored. Its own entry, so the root import stays small: `import { runEvalSuite } from 'redflow/evals'`.
 *
 * @example
 * ```ts
 * import { addEvalCase, runEvalSuite } from 'redflow/evals';
 * await addEvalCase({ log: '.redflow/runs/abc.jsonl', suite: 'evals/orders' });
 * const report = await runEvalSuite({ suite: 'evals/orders', flowPath: 'flow.changed.json' });
 * ```
 */
export { runEvalSuite } from './runSuite.js';
export type { EvalSuiteOptions } from './runSuite.js';
export type { EvalFork, EvalForkOptions } from './seamTypes.js';
export { scoreRun } from './scoreRun.js';
export type { RunScore, JudgeVerdict, CheckResult } from './scoreRun.js';
export { toolPathCredit } from './toolPath.js';
export { summarizeRun } from './runSummary.js';
export type { RunSummary } from './runSummary.js';
export { loadSuite, isBroken } from './suite.js';
export type { LoadedSuite, BrokenCase } from './suite.js';
export { parseExpectations, readEvalCase } from './caseFile.js';
export type { EvalCase } from './caseFile.js';
export type { EvalExpectations, AnswerExpectation, JudgeExpectation, LimitsExpectation } from './expectations.js';
export { addEvalCase } from './addCase.js';
export type { AddCaseOptions } from './addCase.js';
export { judgeAnswer } from './judge.js';
export { judgeReport } from './report.js';
export type { EvalReport, CaseRow, EvalSeam, ReportVerdict } from './report.js';
export { junitXml } from './junit.js';
export { reportHtml } from './html.js';
export { diffRuns } from '../machines/runDiff.js';
export { readCaseDiffs } from './caseDiffs.js';
export type { RunDiff, IterationDiff, Difference, DiffField } from '../machines/runDiff.js';
export { forkRun } from '../host/forkRun.js';
export type { ForkRunOptions, ForkedRun } from '../host/forkRun.js';
