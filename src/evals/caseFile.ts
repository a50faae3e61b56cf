import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { EXPECTATIONS_SCHEMA, type EvalExpectations } from './expectations.js';
import { expectedRegex, schemaValidator } from './answerChecks.js';
import { summarizeRun, type RunSummary } from './runSummary.js';

/** The endings of an expectations file, in the order a case's file is looked for. */
export const EXPECTATIONS_ENDINGS = ['.eval.yaml', '.eval.yml', '.eval.json'] as const;

/**
 * A case of a suite, read and checked: its expectations and its recorded run.
 *
 * @example
 * ```ts
 * const evalCase: EvalCase = await readEvalCase('one', 'evals/orders/one.eval.yaml', 'evals/orders/one.jsonl');
 * console.log(evalCase.recorded.input, evalCase.expectations.tools);
 * ```
 */
export interface EvalCase {
  /** The case's name: its files' names without their endings. */
  readonly name: string;
  readonly expectationsFile: string;
  readonly logFile: string;
  readonly expectations: EvalExpectations;
  /** The recorded run's events. */
  readonly events: readonly AgentEvent[];
  /** The recorded run, summarized. */
  readonly recorded: RunSummary;
}

const validateExpectations = new Ajv({ strict: true, allErrors: true }).compile(EXPECTATIONS_SCHEMA);

function caseError(code: ErrorCode, name: string, message: string, hint: string, at?: string): RedflowError {
  return new RedflowError(errorInfo(code, `case "${name}": ${message}`, { hint, ...(at !== undefined && { path: at }) }));
}

/**
 * Parses and checks a case's expectations text (YAML, or JSON, which YAML reads too).
 *
 * @throws RedflowError `EVAL_CASE_INVALID` naming the case: text that does not parse, a member the
 *   format does not have or of the wrong type, a regex or a JSON Schema that does not compile.
 *
 * @example
 * ```ts
 * const expectations = parseExpectations('order-1', 'answer:\n  contains: FS-77812\nstatus: done\n');
 * ```
 */
export function parseExpectations(name: string, text: string): EvalExpectations {
  const hint = 'see docs/eval-suites.md for the expectations file: answer (exact, contains, regex, schema, judge), tools, status, limits';
  let value: unknown;
  try {
    value = parseYaml(text) ?? {};
  } catch (error) {
    throw caseError(ErrorCode.EVAL_CASE_INVALID, name, `its expectations are not valid YAML or JSON: ${(error as Error).message.split('\n')[0] ?? ''}`, hint);
  }
  if (!validateExpectations(value)) {
    const first = validateExpectations.errors?.[0];
    const where = first?.instancePath || '/';
    const params = (first?.params ?? {}) as { additionalProperty?: unknown; allowedValues?: unknown };
    const extra =
      first?.keyword === 'additionalProperties' ? ` "${String(params.additionalProperty)}"` : Array.isArray(params.allowedValues) ? ` (${params.allowedValues.join(', ')})` : '';
    throw caseError(ErrorCode.EVAL_CASE_INVALID, name, `its expectations are wrong at ${where}: ${first?.message ?? 'invalid'}${extra}`, hint, where);
  }
  const expectations = value as EvalExpectations;
  const { regex, schema } = expectations.answer ?? {};
  if (regex !== undefined) {
    try {
      expectedRegex(regex);
    } catch (error) {
      throw caseError(ErrorCode.EVAL_CASE_INVALID, name, `its answer.regex does not compile: ${(error as Error).message}`, 'write a JavaScript regular expression (its source, or { pattern, flags })', '/answer/regex');
    }
  }
  if (schema !== undefined) {
    try {
      schemaValidator(schema);
    } catch (error) {
      throw caseError(ErrorCode.EVAL_CASE_INVALID, name, `its answer.schema is not a valid JSON Schema: ${(error as Error).message}`, 'give a JSON Schema (draft 7 or 2019-09) the answer must match', '/answer/schema');
    }
  }
  return expectations;
}

/**
 * Reads a case: its expectations file and its recorded log (`<name>.jsonl` beside it).
 *
 * @throws RedflowError `EVAL_CASE_INVALID` (see {@link parseExpectations}, or no expectations
 *   file); `EVAL_CASE_LOG_INVALID` when the log is missing, damaged, or does not begin with
 *   `run.started`. Every message names the case.
 *
 * @example
 * ```ts
 * const evalCase = await readEvalCase('order-1', 'suite/order-1.eval.yaml', 'suite/order-1.jsonl');
 * ```
 */
export async function readEvalCase(name: string, expectationsFile: string | undefined, logFile: string | undefined): Promise<EvalCase> {
  if (expectationsFile === undefined) {
    throw caseError(ErrorCode.EVAL_CASE_INVALID, name, `${name}.jsonl has no expectations file beside it`, `write ${name}.eval.yaml, or make one with \`redflow eval add ${name}.jsonl\``);
  }
  const expectations = parseExpectations(name, await readText(name, expectationsFile));
  if (logFile === undefined) {
    throw caseError(ErrorCode.EVAL_CASE_LOG_INVALID, name, `there is no recorded log ${name}.jsonl beside ${path.basename(expectationsFile)}`, 'put the run\'s log beside its expectations file, named after the case');
  }
  let read;
  try {
    read = await readJsonlLog(logFile);
  } catch (error) {
    throw caseError(ErrorCode.EVAL_CASE_LOG_INVALID, name, `its log cannot be read: ${(error as Error).message}`, 'give the case a log written by Redflow');
  }
  const damage = read.problems.find((problem) => problem.code !== ErrorCode.LOG_RECORD_TORN);
  if (damage !== undefined) {
    throw caseError(ErrorCode.EVAL_CASE_LOG_INVALID, name, `its log is damaged at line ${damage.position}: ${damage.code} ${damage.message}`, '`redflow replay <log>` shows the damage; record the run again');
  }
  if (read.events[0]?.type !== 'run.started') {
    throw caseError(ErrorCode.EVAL_CASE_LOG_INVALID, name, 'its log does not begin with run.started', 'give the case the whole log of a run, as Redflow wrote it');
  }
  return { name, expectationsFile, logFile, expectations, events: read.events, recorded: summarizeRun(read.events) };
}

async function readText(name: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw caseError(ErrorCode.EVAL_CASE_INVALID, name, `its expectations file cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, 'check the file\'s permissions');
  }
}
