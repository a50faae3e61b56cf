import type { ErrorObject } from 'ajv';
import type { ModelResponse } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { scanJsonText } from './scanJsonText.js';
import { looksLikeJson, validateTextAnswer } from './validateTextAnswer.js';
import type { AnswerLimits, AnswerPosition, AnswerRules, AnswerValidation, OutputVerdict } from './answerTypes.js';

/** The default {@link AnswerLimits}. */
export const defaultAnswerLimits: AnswerLimits = { maxChars: 1_000_000, maxDepth: 64 };

export type { AnswerLimits, AnswerPosition, AnswerRules, AnswerValidation, OutputVerdict, SchemaCheck } from './answerTypes.js';

/** The actions a model may answer with. */
const ACTIONS: ReadonlySet<unknown> = new Set(['tool', 'final', 'escalate', 'request_info', 'delegate']);

/** The decision each action goes with, when the answer states one. */
const DECISION_OF: { readonly [A in ModelResponse['action']]: NonNullable<ModelResponse['decision']> } = {
  tool: 'continue',
  request_info: 'continue',
  delegate: 'continue',
  final: 'done',
  escalate: 'escalate',
};

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
export function validateModelAnswer(text: string, rules: AnswerRules, length = text.length, position?: AnswerPosition): AnswerValidation {
  if (length > rules.limits.maxChars) {
    return fail(ErrorCode.ANSWER_TOO_LARGE, `the answer has ${length} characters; the limit is ${rules.limits.maxChars}`, {
      hint: 'answers are one small JSON object; check the model is following the output format',
    });
  }
  if (!text.isWellFormed()) {
    return fail(ErrorCode.ANSWER_INVALID_TEXT, 'the answer is not well-formed Unicode (it has a lone surrogate)');
  }
  if (rules.textActions !== undefined && !looksLikeJson(text)) return validateTextAnswer(text, rules, rules.textActions);
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
  if (isSeveralDecisions(parsed)) {
    return fail(ErrorCode.ANSWER_MULTIPLE_TOOL_CALLS, `the answer makes ${parsed.length} tool calls at once; a step takes one action`, {
      hint: 'call one tool per answer, then decide the next step from its observation',
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail(ErrorCode.ANSWER_NOT_OBJECT, `the answer must be a JSON object, not ${describe(parsed)}`);
  }
  const action = (parsed as { action?: unknown }).action;
  if (action === undefined) return fail(ErrorCode.ACTION_MISSING, 'the answer has no "action"', { hint: ACTION_HINT });
  if (!ACTIONS.has(action)) {
    return fail(ErrorCode.ACTION_UNKNOWN, `unknown action ${JSON.stringify(action).slice(0, 80)}`, { hint: ACTION_HINT, path: '/action' });
  }
  if (!rules.responseSchema(parsed)) return schemaFailure(rules.responseSchema.errors, parsed as { confidence?: unknown });
  const answer = parsed as ModelResponse;
  const reasoning = reasoningFailure(answer, rules, position);
  if (reasoning !== undefined) return reasoning;
  if (answer.action === 'final') {
    return rules.outputCheck === undefined && answer.output === undefined ? { ok: true, answer } : { ok: true, answer, output: outputVerdict(answer, rules.outputCheck) };
  }
  if (answer.action !== 'tool') return { ok: true, answer };

  const tool = answer.tool as string;
  if (!rules.allowedTools.has(tool)) {
    return fail(ErrorCode.TOOL_NOT_ALLOWED, `the tool "${tool.slice(0, 80)}" is not in allowedTools`, {
      hint: rules.allowedTools.size === 0 ? 'the agent has no tools: answer with a final action' : `allowed tools: ${[...rules.allowedTools].join(', ')}`,
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

const ACTION_HINT = 'action must be "tool", "final", "escalate", "request_info" or "delegate"';

/**
 * The reasoning an answer owes: with explicit reasoning a thought always, and after an
 * observation a reflection and a decision; and a decision, when given, that agrees with the action.
 */
function reasoningFailure(answer: ModelResponse, rules: AnswerRules, position: AnswerPosition | undefined): AnswerValidation | undefined {
  const { decision } = answer;
  if (decision !== undefined && decision !== DECISION_OF[answer.action]) {
    return fail(ErrorCode.DECISION_MISMATCH, `the decision "${decision}" does not go with the action "${answer.action}"`, {
      hint: 'decision is "continue" for tool, request_info and delegate, "done" for final, "escalate" for escalate',
      path: '/decision',
    });
  }
  if (rules.explicitReasoning !== true) return undefined;
  const after = position?.afterObservation === true;
  if (position?.reasoningHidden !== true) {
    if (answer.thought === undefined || answer.thought.trim() === '') {
      return fail(ErrorCode.THOUGHT_MISSING, 'the answer gives no "thought"', { hint: 'this agent reasons explicitly: say what you know, what is missing and why this action, in "thought"', path: '/thought' });
    }
    if (after && (answer.reflection === undefined || answer.reflection.trim() === '')) {
      return fail(ErrorCode.REFLECTION_MISSING, 'the answer after an observation gives no "reflection"', {
        hint: 'this agent reasons explicitly: say what the last observation means and whether it is enough, in "reflection"',
        path: '/reflection',
      });
    }
  }
  if (after && decision === undefined) {
    return fail(ErrorCode.DECISION_MISSING, 'the answer after an observation gives no "decision"', {
      hint: 'this agent reasons explicitly: add "decision": "continue", "done" or "escalate"',
      path: '/decision',
    });
  }
  return undefined;
}

/** A final answer's output, checked against the outputSchema when the agent has one. */
function outputVerdict(answer: ModelResponse, check: AnswerRules['outputCheck']): OutputVerdict {
  const value = 'output' in answer ? answer.output : messageAsValue(answer.message ?? '');
  if (check === undefined) return { value };
  const verdict = check(value);
  return verdict === true ? { value } : { value, errors: verdict };
}

/** A message that is a JSON object or array is the output itself; any other message is the output as text. */
function messageAsValue(message: string): unknown {
  const trimmed = message.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return message;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return message;
  }
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
    hint: 'expected {"action":"tool","tool":…,"input":{…},"confidence":0..1}, {"action":"final","message":…}, or escalate, request_info, delegate with their "input"',
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

/**
 * An array of two or more decisions: what a model actor records when the model made several native
 * tool calls in one answer (see `protocol: "tools"`), so the log keeps them and the core refuses them.
 */
function isSeveralDecisions(value: unknown): value is readonly unknown[] {
  return Array.isArray(value) && value.length > 1 && value.every((item) => typeof item === 'object' && item !== null && 'action' in item);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
