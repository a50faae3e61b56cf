import type { ModelLlmConfig } from '../contracts/schema-types.js';

/**
 * A judge: a model asked to grade the final answer against a rubric. Its `model` is a model
 * node's settings (as in a flow's `model.llm` node: `scripted` with `answers`, `openai`,
 * `openai-compatible` with a `baseUrl`, …); it answers `{"score": 0..1, "reason": "..."}`.
 *
 * @example
 * ```ts
 * const judge: JudgeExpectation = { model: { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.1' }, rubric: 'Names the carrier.', passScore: 0.7 };
 * ```
 */
export interface JudgeExpectation {
  readonly model: ModelLlmConfig;
  readonly rubric: string;
  /** The least score that passes (default 0.5). */
  readonly passScore?: number;
}

/**
 * What the final answer must be; each given member is one check.
 *
 * @example
 * ```ts
 * const answer: AnswerExpectation = { contains: ['A-1001', 'FastShip'], regex: { pattern: 'arrive on \\d{4}-\\d{2}-\\d{2}', flags: 'i' } };
 * ```
 */
export interface AnswerExpectation {
  /** The answer, exactly (surrounding white space aside). */
  readonly exact?: string;
  /** Texts the answer must contain, each (case-sensitive). */
  readonly contains?: string | readonly string[];
  /** A regular expression the answer must match: its source, or `{ pattern, flags }`. */
  readonly regex?: string | { readonly pattern: string; readonly flags?: string };
  /** A JSON Schema the answer, parsed as JSON (or the outcome's structured output), must match. */
  readonly schema?: Record<string, unknown>;
  readonly judge?: JudgeExpectation;
}

/**
 * Limits the eval run must stay within.
 *
 * @example
 * ```ts
 * const limits: LimitsExpectation = { iterations: 4, tokens: 2000, durationMs: 30_000, cost: 0.01, price: { input: 0.15, output: 0.6 } };
 * ```
 */
export interface LimitsExpectation {
  readonly iterations?: number;
  readonly tokens?: number;
  readonly durationMs?: number;
  /** US dollars the eval run may cost, priced by `price` or else by the flow's `budget.prices` (the run's recorded `costUsd`). */
  readonly cost?: number;
  /** US dollars per million tokens, input and output, to price the eval run with (over the flow's budget). */
  readonly price?: { readonly input: number; readonly output: number };
}

/**
 * A case's expectations: the file `<case>.eval.yaml` (or `.eval.yml`, `.eval.json`) beside the
 * case's recorded log `<case>.jsonl`. Every member is optional; each one given is scored.
 *
 * @example
 * ```ts
 * const expectations: EvalExpectations = {
 *   answer: { contains: 'FS-77812' },
 *   tools: ['lookup_order', 'track_shipment'],
 *   status: 'done',
 *   limits: { iterations: 5 },
 * };
 * ```
 */
export interface EvalExpectations {
  readonly answer?: AnswerExpectation;
  /** Tools the run must call in this order; other calls may come between (an ordered subsequence). */
  readonly tools?: readonly string[];
  /** The outcome's status, or any one of several. */
  readonly status?: string | readonly string[];
  readonly limits?: LimitsExpectation;
}

const positive = { type: 'number', minimum: 0 } as const;

/** The statuses a run can end (or stop) in, as a run's summary reads them. */
export const RUN_STATUSES = ['done', 'done_partial', 'escalate', 'delegate', 'blocked', 'waiting', 'unfinished'];

/** The JSON Schema of an expectations file, checked before a case runs. */
export const EXPECTATIONS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    answer: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        exact: { type: 'string' },
        contains: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1 }] },
        regex: {
          anyOf: [
            { type: 'string' },
            { type: 'object', required: ['pattern'], additionalProperties: false, properties: { pattern: { type: 'string' }, flags: { type: 'string' } } },
          ],
        },
        schema: { type: 'object' },
        judge: {
          type: 'object',
          required: ['model', 'rubric'],
          additionalProperties: false,
          properties: { model: { type: 'object' }, rubric: { type: 'string', minLength: 1 }, passScore: { type: 'number', minimum: 0, maximum: 1 } },
        },
      },
    },
    tools: { type: 'array', items: { type: 'string', minLength: 1 } },
    status: {
      anyOf: [
        { enum: RUN_STATUSES },
        { type: 'array', items: { enum: RUN_STATUSES }, minItems: 1 },
      ],
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        iterations: positive,
        tokens: positive,
        durationMs: positive,
        cost: positive,
        price: { type: 'object', required: ['input', 'output'], additionalProperties: false, properties: { input: positive, output: positive } },
      },
    },
  },
} as const;
