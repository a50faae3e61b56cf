import { access, copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Document } from 'yaml';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import type { EvalExpectations } from './expectations.js';
import { summarizeRun, type RunSummary } from './runSummary.js';

/**
 * Options of {@link addEvalCase}.
 *
 * @example
 * ```ts
 * const options: AddCaseOptions = { log: '.redflow/runs/abc.jsonl', suite: 'evals/orders', name: 'late-parcel', answer: 'exact' };
 * ```
 */
export interface AddCaseOptions {
  /** The recorded run's log. */
  readonly log: string;
  /** The suite's folder (made when missing). */
  readonly suite: string;
  /** The case's name (default the log's file name without `.jsonl`). */
  readonly name?: string;
  /** How the final answer is expected: `contains` it (default) or `exact`ly it. */
  readonly answer?: 'contains' | 'exact';
}

/** The expectations a recorded run prefills: its final answer, its tool path, its status. */
export function expectationsOf(recorded: RunSummary, answer: 'contains' | 'exact' = 'contains'): EvalExpectations {
  return {
    ...(recorded.answer !== undefined && { answer: answer === 'exact' ? { exact: recorded.answer } : { contains: recorded.answer } }),
    ...(recorded.tools.length > 0 && { tools: [...recorded.tools] }),
    status: recorded.status,
  };
}

/**
 * Turns a run's log into a case of a suite: copies the log to `<suite>/<name>.jsonl` and writes
 * `<suite>/<name>.eval.yaml` with expectations prefilled from the run (its final answer, its
 * tool path, its status), to be edited.
 *
 * @throws RedflowError `EVAL_CASE_LOG_INVALID` when the log cannot be read, is damaged or its run
 *   has not ended (nor waits for an answer); `EVAL_CASE_EXISTS` when the suite has that case.
 *
 * @example
 * ```ts
 * const { name, expectationsFile } = await addEvalCase({ log: '.redflow/runs/abc.jsonl', suite: 'evals/orders' });
 * ```
 */
export async function addEvalCase(options: AddCaseOptions): Promise<{ readonly name: string; readonly logFile: string; readonly expectationsFile: string; readonly expectations: EvalExpectations }> {
  const name = options.name ?? path.basename(options.log).replace(/\.jsonl$/, '');
  const refuse = (message: string, hint: string) => new RedflowError(errorInfo(ErrorCode.EVAL_CASE_LOG_INVALID, `case "${name}": ${message}`, { hint }));
  let read;
  try {
    read = await readJsonlLog(path.resolve(options.log));
  } catch (error) {
    throw refuse(`cannot read ${options.log}: ${(error as Error).message}`, 'give the .jsonl log of a run');
  }
  const damage = read.problems.find((problem) => problem.code !== ErrorCode.LOG_RECORD_TORN);
  if (damage !== undefined || read.events[0]?.type !== 'run.started') {
    throw refuse(`${options.log} is not a whole run's log${damage ? ` (line ${damage.position}: ${damage.code})` : ''}`, '`redflow replay <log>` shows what is wrong with it');
  }
  const recorded = summarizeRun(read.events);
  if (recorded.status === 'unfinished') throw refuse(`the run of ${options.log} has not ended`, '`redflow resume <log>` finishes it first');
  const suite = path.resolve(options.suite);
  const logFile = path.join(suite, `${name}.jsonl`);
  const expectationsFile = path.join(suite, `${name}.eval.yaml`);
  for (const file of [logFile, expectationsFile]) {
    if (await exists(file)) {
      throw new RedflowError(errorInfo(ErrorCode.EVAL_CASE_EXISTS, `case "${name}": ${file} exists already`, { hint: 'give the case another name with --name, or remove the old one' }));
    }
  }
  await mkdir(suite, { recursive: true });
  await copyFile(path.resolve(options.log), logFile);
  const expectations = expectationsOf(recorded, options.answer);
  const document = new Document(expectations);
  document.commentBefore = ` Expectations of case ${name}, prefilled from run ${recorded.traceId}: edit them (docs/eval-suites.md).`;
  await writeFile(expectationsFile, document.toString({ lineWidth: 0 }));
  return { name, logFile, expectationsFile, expectations };
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
