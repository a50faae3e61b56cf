/**
 * The range checks of an agent core's stop condition values, which the JSON Schema cannot say
 * (`value` is untyped there, and `iteration_limit` is bounded by `maxIterations`). Pure and
 * browser-safe: flow validation reports them as `NODE_CONFIG_INVALID`, and the editor shows the
 * same messages next to the General tab's rows.
 */
import { StopCondition } from '../events/stopConditions.js';
import { describeValue } from './describeValue.js';

/** Highest `maxIterations` the schema allows; bounds `iteration_limit` when `maxIterations` itself is invalid. */
export const MAX_ITERATIONS_LIMIT = 20;
/** `maxIterations` when the config has none (the schema's default). */
const DEFAULT_MAX_ITERATIONS = 5;

/** The `iteration_limit` bound: `maxIterations` when it is valid (or absent: its default), else the schema's 20. */
export function iterationLimitBound(config: Readonly<Record<string, unknown>>): number {
  const max = config.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  return typeof max === 'number' && Number.isInteger(max) && max >= 1 && max <= MAX_ITERATIONS_LIMIT ? max : MAX_ITERATIONS_LIMIT;
}

/** One stop condition whose value is out of range: its index in `stopConditions`, and why. */
export interface StopConditionValueProblem {
  readonly index: number;
  readonly problem: string;
}

/**
 * The stop conditions of `config` whose values are out of range. Entries that are not objects,
 * or of a type without a value, are the schema's business and are skipped here.
 *
 * @example
 * ```ts
 * stopConditionValueProblems({ maxIterations: 5, stopConditions: [{ type: 'confidence_threshold', value: 1.5 }] })
 * // [{ index: 0, problem: 'confidence_threshold needs a number value from 0 to 1, got 1.5' }]
 * ```
 */
export function stopConditionValueProblems(config: Readonly<Record<string, unknown>>): StopConditionValueProblem[] {
  const conditions = config.stopConditions;
  if (!Array.isArray(conditions)) return [];
  const bound = iterationLimitBound(config);
  const problems: StopConditionValueProblem[] = [];
  conditions.forEach((condition: unknown, index) => {
    if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return;
    const type: unknown = Object.hasOwn(condition, 'type') ? (condition as { type: unknown }).type : undefined;
    const value: unknown = Object.hasOwn(condition, 'value') ? (condition as { value: unknown }).value : undefined;
    if (type === StopCondition.ConfidenceThreshold) {
      const valid = typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
      if (!valid) problems.push({ index, problem: `confidence_threshold needs a number value from 0 to 1, got ${describeValue(value)}` });
    } else if (type === StopCondition.IterationLimit) {
      const valid = typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= bound;
      if (!valid) problems.push({ index, problem: `iteration_limit needs an integer value from 1 to maxIterations (${bound}), got ${describeValue(value)}` });
    }
  });
  return problems;
}
