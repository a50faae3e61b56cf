import type { ModelResponse } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { parseTextAction, textWithoutThought } from './actionSyntax.js';
import type { AnswerRules, AnswerValidation, TextActionRules } from './answerTypes.js';

export type { TextActionRules } from './answerTypes.js';

/**
 * Judges an answer written as `Thought: … / Action: name(…)` or `Final Answer: …`. A tool call is
 * held to the same rules as a JSON one (allowed tool, input schema); it carries no confidence, so
 * it counts as certain. An action that cannot be read is taken as a direct answer: the model's
 * text, without its thought, is the message (a session answers rather than failing on it).
 *
 * @example
 * ```ts
 * validateTextAnswer('Action: code_search(query="auth")', rules, { signatures: [] });
 * ```
 */
export function validateTextAnswer(text: string, rules: AnswerRules, textRules: TextActionRules): AnswerValidation {
  const read = parseTextAction(text, textRules.signatures);
  const thought = read.thought !== undefined && read.thought !== '' ? { thought: read.thought } : {};
  if (read.kind === 'tool') {
    if (!rules.allowedTools.has(read.tool)) {
      return fail(ErrorCode.TOOL_NOT_ALLOWED, `the tool "${read.tool.slice(0, 80)}" is not one of the tools offered`, `offered tools: ${[...rules.allowedTools].join(', ')}`);
    }
    const check = rules.toolInput.get(read.tool);
    const verdict = check ? check(read.input) : true;
    if (verdict !== true) return fail(ErrorCode.TOOL_INPUT_INVALID, `the input for "${read.tool}" does not match its schema: ${verdict}`);
    const answer: ModelResponse = { action: 'tool', tool: read.tool, input: read.input, confidence: 1, ...thought };
    return { ok: true, answer };
  }
  const message = read.kind === 'final' ? read.message : textWithoutThought(text);
  if (message.trim() === '') return fail(ErrorCode.FINAL_MESSAGE_MISSING, 'the answer has no text besides its thought', 'a direct answer needs text for the user');
  return { ok: true, answer: { action: 'final', message, ...thought } };
}

/** True when an answer is meant as JSON (it opens with `{`), so the JSON rules judge it. */
export function looksLikeJson(text: string): boolean {
  return text.trimStart().startsWith('{');
}

function fail(code: ErrorCode, message: string, hint?: string): AnswerValidation {
  return { ok: false, error: errorInfo(code, message, hint === undefined ? undefined : { hint }) };
}
