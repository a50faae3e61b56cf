import type { ErrorObject } from 'ajv';
import type { ModelResponse } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';
import { scanJsonText } from './scanJsonText.js';

/** Size and depth limits applied to a model's answer before it is parsed. */
export interface AnswerLimits {
  /** Longest answer accepted, in UTF-16 code units (default 1,000,000). */
  readonly maxChars: number;
  /** Deepest nesting of objects and arrays accepted (default 64). */
  readonly maxDepth: number;
}

/** The default {@link AnswerLimits}. */
export const defaultAnswerLimits: AnswerLimits = { maxChars: 1_000_000, maxDepth: 64 };

/** A compiled schema check: ajv's validate function shape. */
export interface SchemaCheck {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/**
 * Everything the validation of one answer needs, compiled once per run: the model-response schema,
 * the allowed tools and each tool's input check. Pure data and functions: no I/O.
 */
export interface AnswerRules {
  readonly limits: AnswerLimits;
  readonly responseSchema: SchemaCheck;
  readonly allowedTools: ReadonlySet<string>;
  /** Returns `true` or what is wrong with the input; absent for a tool with no schema. */
  readonly toolInput: ReadonlyMap<string, (input: unknown) => true | string>;
}

/** The outcome of validating one answer. */
export type AnswerValidation =
  | { readonly ok: true; readonly answer: ModelResponse }
  | { readonly ok: false; readonly error: ErrorInfo };

/**
 * The strict validation of a model answer, in order: size and depth before parsing,
 * well-formed text, valid JSON, duplicate/reserved keys, the schema, the tool is allowed, its
 * input matches the tool's schema. Each failure has its own {@link ErrorCode}.
 *
 * @param length the answer's original length when `text` was truncated for the log.
 * @example
 * ```ts
 * const result = validateModelAnswer('{"action":"final","message":"hi"}', rules);
 * if (!result.ok) console.log(result.error.code);
 * ```
 */
export function validateModelAnswer(text: string, rules: AnswerRules, length = text.length): AnswerValidation {
  if (length > rules.limits.maxChars) {
    return fail(ErrorCode.ANSWER_TOO_LARGE, `the answer has ${length} characters; the limit is ${rules.limits.maxChars}`, {
      hint: 'answers are one small JSON object; check the model is following the output format',
    });
  }
  if (!text.isWellFormed()) {
    return fail(ErrorCode.ANSWER_INVALID_TEXT, 'the answer is not well-formed Unicode (it has a lone surrogate)');
  }
  const structural = scanJsonText(text, rules.limits.maxDepth);
  if (structural && structural.code === ErrorCode.ANSWER_TOO_DEEP) return { ok: false, error: structural };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return fail(ErrorCode.INVALID_JSON, `the answer is not valid JSON: ${(error as Error).message}`, {
      hint: 'the model must answer with one JSON object in the output format of the prompt',
    });
  }
  if (structural) return { ok: false, error: structural };
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail(ErrorCode.ANSWER_NOT_OBJECT, `the answer must be a JSON object, not ${describe(parsed)}`);
  }
  const action = (parsed as { action?: unknown }).action;
  if (action === undefined) return fail(ErrorCode.ACTION_MISSING, 'the answer has no "action"', { hint: 'use "tool" or "final"' });
  if (action !== 'tool' && action !== 'final') {
    return fail(ErrorCode.ACTION_UNKNOWN, `unknown action ${JSON.stringify(action).slice(0, 80)}`, {
      hint: 'action must be "tool" or "final"',
      path: '/action',
    });
  }
  if (!rules.responseSchema(parsed)) return schemaFailure(rules.responseSchema.errors, parsed as { confidence?: unknown });
  const answer = parsed as ModelResponse;
  if (answer.action === 'final') return { ok: true, answer };

  const tool = answer.tool as string;
  if (!rules.allowedTools.has(tool)) {
    return fail(ErrorCode.TOOL_NOT_ALLOWED, `the tool "${tool.slice(0, 80)}" is not in allowedTools`, {
      hint: `allowed tools: ${[...rules.allowedTools].join(', ')}`,
      path: '/tool',
    });
  }
  const check = rules.toolInput.get(tool);
  const verdict = check ? check(answer.input) : true;
  if (verdict !== true) {
    return fail(ErrorCode.TOOL_INPUT_INVALID, `the input for "${tool}" does not match its schema: ${verdict}`, { path: '/input' });
  }
  return { ok: true, answer };
}

function schemaFailure(errors: ErrorObject[] | null | undefined, answer: { confidence?: unknown }): AnswerValidation {
  const first = errors?.[0];
  const path = first?.instancePath || undefined;
  if (first?.keyword === 'required') {
    const missing = (first.params as { missingProperty: string }).missingProperty;
    if (missing === 'confidence') return fail(ErrorCode.CONFIDENCE_MISSING, 'a tool action needs a "confidence" between 0 and 1');
    if (missing === 'tool') return fail(ErrorCode.TOOL_MISSING, 'a tool action needs the "tool" to call');
    if (missing === 'message') return finalMessageMissing('has no "message"');
  }
  if (path === '/message' && first?.keyword === 'pattern') return finalMessageMissing('has a blank "message"');
  // A literal such as 1e400 parses to Infinity, which ajv reports as a type error.
  if (path === '/confidence' && typeof answer.confidence === 'number') {
    return fail(ErrorCode.CONFIDENCE_OUT_OF_RANGE, `confidence must be between 0 and 1, not ${answer.confidence}`, { path });
  }
  const where = path ?? '(root)';
  const detail =
    first?.keyword === 'additionalProperties'
      ? `has unknown property "${(first.params as { additionalProperty: string }).additionalProperty}"`
      : (first?.message ?? 'does not match');
  return fail(ErrorCode.ANSWER_SCHEMA_MISMATCH, `the answer ${where} ${detail}`, {
    hint: 'expected {"action":"tool"|"final","tool":…,"input":{…},"confidence":0..1,"message":…}',
    path,
  });
}

/** A final answer ends the run with its message as the answer: without one the run would end `done` with nothing to say. */
function finalMessageMissing(what: string): AnswerValidation {
  return fail(ErrorCode.FINAL_MESSAGE_MISSING, `the final answer ${what}`, {
    hint: 'a final answer needs a non-empty "message": the answer given to the user',
    path: '/message',
  });
}

function fail(code: ErrorCode, message: string, extra?: { hint?: string; path?: string | undefined }): AnswerValidation {
  return { ok: false, error: errorInfo(code, message, extra) };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
