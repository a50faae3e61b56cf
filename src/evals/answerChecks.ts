import { Ajv, type ValidateFunction } from 'ajv';
import type { AnswerExpectation } from './expectations.js';

/**
 * One scored check of a case: its name, whether it passed, its score in [0, 1] and why.
 *
 * @example
 * ```ts
 * const check: CheckResult = { name: 'tools', pass: false, score: 0.5, detail: 'called lookup_order; expected lookup_order → track_shipment (1/2 in order)' };
 * ```
 */
export interface CheckResult {
  /** `answer.exact`, `answer.contains`, `answer.regex`, `answer.schema`, `answer.judge`, `tools`, `status`, `limits.<name>`. */
  readonly name: string;
  readonly pass: boolean;
  readonly score: number;
  readonly detail: string;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const compiled = new WeakMap<object, ValidateFunction>();

/** The validator of a JSON Schema, compiled once per schema object (throws when it is not a valid schema). */
export function schemaValidator(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** The regular expression of a `regex` expectation (throws a SyntaxError when it is not one). */
export function expectedRegex(regex: NonNullable<AnswerExpectation['regex']>): RegExp {
  return typeof regex === 'string' ? new RegExp(regex) : new RegExp(regex.pattern, regex.flags ?? '');
}

const passed = (name: string, detail: string): CheckResult => ({ name, pass: true, score: 1, detail });
const failed = (name: string, detail: string, score = 0): CheckResult => ({ name, pass: false, score, detail });

/** Shortens a text for a check's detail. */
export function clip(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Scores a final answer against the answer expectations that need no model (exact, contains,
 * regex, schema), one {@link CheckResult} each. `output` is the outcome's structured output, which
 * a schema checks before the answer's text parsed as JSON.
 *
 * @example
 * ```ts
 * checkAnswer({ contains: ['FS-77812', 'Lyon'] }, 'Order A-1001 is in Lyon (FS-77812).'); // [{ name: 'answer.contains', pass: true, score: 1, … }]
 * ```
 */
export function checkAnswer(expectation: AnswerExpectation, answer: string | undefined, output?: unknown): CheckResult[] {
  const checks: CheckResult[] = [];
  const text = answer ?? '';
  if (expectation.exact !== undefined) {
    checks.push(
      text.trim() === expectation.exact.trim() ? passed('answer.exact', 'the answer is the expected one') : failed('answer.exact', `the answer is ${JSON.stringify(clip(text))}`),
    );
  }
  if (expectation.contains !== undefined) {
    const wanted = typeof expectation.contains === 'string' ? [expectation.contains] : expectation.contains;
    const missing = wanted.filter((part) => !text.includes(part));
    // Partial credit: the share of the expected texts found.
    checks.push(
      missing.length === 0
        ? passed('answer.contains', `the answer contains all ${wanted.length} expected text${wanted.length === 1 ? '' : 's'}`)
        : failed('answer.contains', `the answer lacks ${missing.map((part) => JSON.stringify(clip(part, 60))).join(', ')}`, (wanted.length - missing.length) / wanted.length),
    );
  }
  if (expectation.regex !== undefined) {
    const regex = expectedRegex(expectation.regex);
    checks.push(regex.test(text) ? passed('answer.regex', `the answer matches ${String(regex)}`) : failed('answer.regex', `the answer does not match ${String(regex)}`));
  }
  if (expectation.schema !== undefined) checks.push(checkSchema(expectation.schema, text, output));
  return checks;
}

function checkSchema(schema: Record<string, unknown>, text: string, output: unknown): CheckResult {
  let value = output;
  if (value === undefined) {
    try {
      value = JSON.parse(text);
    } catch {
      return failed('answer.schema', 'the answer is not JSON, and the run gave no structured output');
    }
  }
  const validate = schemaValidator(schema);
  if (validate(value)) return passed('answer.schema', 'the answer matches the schema');
  const first = validate.errors?.[0];
  return failed('answer.schema', `the answer does not match the schema: ${first ? `${first.instancePath || '/'} ${first.message ?? ''}` : 'invalid'}`);
}
