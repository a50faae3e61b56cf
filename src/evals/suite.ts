import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo, toErrorInfo, type ErrorInfo } from '../errors.js';
import { EXPECTATIONS_ENDINGS, readEvalCase, type EvalCase } from './caseFile.js';

/**
 * A case that could not be read: it is reported as an error row, and the rest of the suite runs.
 *
 * @example
 * ```ts
 * const broken: BrokenCase = { name: 'two', error: { code: ErrorCode.EVAL_CASE_INVALID, message: 'case "two": …' } };
 * ```
 */
export interface BrokenCase {
  readonly name: string;
  readonly error: ErrorInfo;
}

/**
 * A suite's cases, in name order: each read, or broken.
 *
 * @example
 * ```ts
 * const suite: LoadedSuite = await loadSuite('evals/orders');
 * ```
 */
export interface LoadedSuite {
  readonly dir: string;
  readonly cases: readonly (EvalCase | BrokenCase)[];
}

/**
 * Whether a case of a {@link LoadedSuite} could not be read.
 *
 * @example
 * ```ts
 * for (const entry of (await loadSuite('evals/orders')).cases) console.log(entry.name, isBroken(entry) ? entry.error.code : 'ok');
 * ```
 */
export function isBroken(entry: EvalCase | BrokenCase): entry is BrokenCase {
  return 'error' in entry;
}

/**
 * Reads a suite folder: every `<case>.jsonl` log and `<case>.eval.yaml` (`.eval.yml`,
 * `.eval.json`) expectations file, paired by name. A case whose files are missing, wrong or
 * damaged is a {@link BrokenCase}, its error naming it.
 *
 * @throws RedflowError `EVAL_SUITE_NOT_FOUND` when the folder does not exist or holds no case.
 *
 * @example
 * ```ts
 * const suite = await loadSuite('evals/orders');
 * for (const entry of suite.cases) if (isBroken(entry)) console.error(entry.name, entry.error.code);
 * ```
 */
export async function loadSuite(dir: string): Promise<LoadedSuite> {
  const folder = path.resolve(dir);
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    throw new RedflowError(errorInfo(ErrorCode.EVAL_SUITE_NOT_FOUND, `there is no suite folder ${dir}`, { hint: 'give the folder of a suite: recorded logs (<case>.jsonl) with their <case>.eval.yaml; `redflow eval add <log> --suite <dir>` makes one' }));
  }
  const files = new Map<string, { expectations?: string; log?: string }>();
  for (const name of names.sort()) {
    const ending = EXPECTATIONS_ENDINGS.find((end) => name.endsWith(end));
    const caseName = ending !== undefined ? name.slice(0, -ending.length) : name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : undefined;
    if (caseName === undefined || caseName === '') continue;
    const entry = files.get(caseName) ?? {};
    // The first ending found wins: a case with both .eval.yaml and .eval.json reads the yaml.
    if (ending !== undefined) entry.expectations ??= path.join(folder, name);
    else entry.log = path.join(folder, name);
    files.set(caseName, entry);
  }
  if (files.size === 0) {
    throw new RedflowError(errorInfo(ErrorCode.EVAL_SUITE_NOT_FOUND, `the suite folder ${dir} holds no case`, { hint: 'add cases with `redflow eval add <log> --suite <dir>`' }));
  }
  const cases = await Promise.all(
    [...files].map(async ([name, entry]): Promise<EvalCase | BrokenCase> => {
      try {
        return await readEvalCase(name, entry.expectations, entry.log);
      } catch (error) {
        return { name, error: toErrorInfo(error, ErrorCode.EVAL_CASE_INVALID) };
      }
    }),
  );
  return { dir: folder, cases };
}
