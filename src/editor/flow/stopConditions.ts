/**
 * The agent core's `stopConditions` as the General tab edits them: one switch per condition type,
 * and the range checks of their values. The schema (`agent-core.react.schema.json`) only says what
 * an entry looks like (`{ type, value? }`, `value` untyped); the ranges are flow
 * validation's own (src/flows/stopConditionValues.ts, shared), so the messages are the same. What each condition does is src/machines/stopConditions.ts.
 */
import { StopCondition } from '../../events/stopConditions.js';
import { iterationLimitBound, stopConditionValueProblems } from '../../flows/stopConditionValues.js';
import type { ConfigIssue } from './configIssue.js';

/** One of the stop condition types of the schema. */
export type StopConditionType = (typeof StopCondition)[keyof typeof StopCondition];

/** The config key the conditions live under. */
export const STOP_CONDITIONS_FIELD = 'stopConditions';


/** How a condition's `value` is edited; `none`: the condition takes no value. */
export type StopConditionValueKind = 'none' | 'number' | 'integer';

/** What the editor knows of a stop condition type. */
export interface StopConditionSpec {
  readonly type: StopConditionType;
  readonly valueKind: StopConditionValueKind;
  /** What the condition does to a run (src/machines/stopConditions.ts, reactMachine's guards). */
  readonly help: string;
}

/** The types in the order the editor lists them. */
export const STOP_CONDITION_SPECS: readonly StopConditionSpec[] = [
  {
    type: StopCondition.FinalAnswer,
    valueKind: 'none',
    help: 'The run ends (done) on the model’s final answer. It always does, listed or not; takes no value.',
  },
  {
    type: StopCondition.ConfidenceThreshold,
    valueKind: 'number',
    help: 'After a tool call, the run ends done_partial if the model’s confidence for that step is at least this value (0–1).',
  },
  {
    type: StopCondition.IterationLimit,
    valueKind: 'integer',
    help: 'The run escalates after this many iterations when it is lower than max iterations (1–max iterations).',
  },
];

/** The range a condition's value must be in, for a given config. */
export interface ValueRange {
  readonly min: number;
  readonly max: number;
  readonly step: number;
}


/** The range of a condition type's value, or `undefined` for a type without a value. */
export function valueRange(type: StopConditionType, config: Readonly<Record<string, unknown>>): ValueRange | undefined {
  if (type === StopCondition.ConfidenceThreshold) return { min: 0, max: 1, step: 0.05 };
  if (type === StopCondition.IterationLimit) return { min: 1, max: iterationLimitBound(config), step: 1 };
  return undefined;
}

/** The value a condition starts with when switched on. */
export function defaultValue(type: StopConditionType, config: Readonly<Record<string, unknown>>): number | undefined {
  if (type === StopCondition.ConfidenceThreshold) return 0.8;
  if (type === StopCondition.IterationLimit) return Math.min(3, iterationLimitBound(config));
  return undefined;
}

/** The config's stop conditions as they are (an invalid non-array reads as none). */
export function stopConditionsOf(config: Readonly<Record<string, unknown>>): readonly unknown[] {
  const conditions = config[STOP_CONDITIONS_FIELD];
  return Array.isArray(conditions) ? conditions : [];
}

function typeOf(entry: unknown): unknown {
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? (entry as { type?: unknown }).type : undefined;
}

/** The indexes of the entries of one type (the runtime reads the first). */
export function indexesOf(conditions: readonly unknown[], type: StopConditionType): number[] {
  return conditions.flatMap((entry, index) => (typeOf(entry) === type ? [index] : []));
}

/** The config with `stopConditions` replaced; none left removes the key (the schema's default is []). */
function withConditions(config: Readonly<Record<string, unknown>>, conditions: readonly unknown[]): Record<string, unknown> {
  const next: Record<string, unknown> = { ...config };
  if (conditions.length === 0) delete next[STOP_CONDITIONS_FIELD];
  else next[STOP_CONDITIONS_FIELD] = [...conditions];
  return next;
}

/**
 * The config with a condition type switched on (appended with its default value, if it has none
 * yet) or off (every entry of that type removed). Other entries are kept as they are, in order.
 *
 * @example
 * ```ts
 * setStopCondition({ maxIterations: 5 }, 'confidence_threshold', true)
 * // { maxIterations: 5, stopConditions: [{ type: 'confidence_threshold', value: 0.8 }] }
 * ```
 */
export function setStopCondition(config: Readonly<Record<string, unknown>>, type: StopConditionType, enabled: boolean): Record<string, unknown> {
  const conditions = stopConditionsOf(config);
  const present = indexesOf(conditions, type).length > 0;
  if (enabled === present) return { ...config };
  if (!enabled) return withConditions(config, conditions.filter((entry) => typeOf(entry) !== type));
  const value = defaultValue(type, config);
  return withConditions(config, [...conditions, value === undefined ? { type } : { type, value }]);
}

/**
 * The config with the value of a condition type's first entry set (`undefined` removes it). A type
 * not in the list is added.
 */
export function setStopConditionValue(
  config: Readonly<Record<string, unknown>>,
  type: StopConditionType,
  value: number | undefined,
): Record<string, unknown> {
  const conditions = [...stopConditionsOf(config)];
  const entry = value === undefined ? { type } : { type, value };
  const [first] = indexesOf(conditions, type);
  if (first === undefined) conditions.push(entry);
  else conditions[first] = entry;
  return withConditions(config, conditions);
}

/**
 * The range problems of the stop conditions' values, as {@link ConfigIssue}s of `stopConditions`
 * with the entry's path (`['0', 'value']`): what flow validation reports as `NODE_CONFIG_INVALID`.
 *
 * @example
 * ```ts
 * checkStopConditionValues({ maxIterations: 5, stopConditions: [{ type: 'confidence_threshold', value: 1.5 }] })
 * // [{ field: 'stopConditions', path: ['0', 'value'],
 * //    detail: 'confidence_threshold needs a number value from 0 to 1, got 1.5', message: '0.value: confidence_threshold needs …' }]
 * ```
 */
export function checkStopConditionValues(config: Readonly<Record<string, unknown>>): ConfigIssue[] {
  return stopConditionValueProblems(config).map(({ index, problem }) => ({
    field: STOP_CONDITIONS_FIELD,
    path: [String(index), 'value'],
    detail: problem,
    message: `${index}.value: ${problem}`,
  }));
}
