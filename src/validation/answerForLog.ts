import { ErrorCode, type ErrorInfo } from '../errors.js';
import { textWithoutThought } from './actionSyntax.js';
import { validateModelAnswer, type AnswerPosition, type AnswerRules, type AnswerValidation } from './validateModelAnswer.js';
import { looksLikeJson } from './validateTextAnswer.js';

/** How much of an answer over the size limit the log keeps (the rest is only counted). */
export const LOGGED_EXCERPT_CHARS = 1024;

/** A model answer as the log records it (the `text`, `thoughtHidden` and `rejection` of `model.answered`). */
export interface LoggedAnswer {
  readonly text: string;
  /** The answer held a thought that the log leaves out. */
  readonly thoughtHidden?: true;
  /** The verdict on the answer as received, when `text` is withheld and judging it again would differ. */
  readonly rejection?: ErrorInfo;
}

/** Failures found before the answer is parsed: their text cannot be taken apart safely. */
const UNPARSED: ReadonlySet<string> = new Set([
  ErrorCode.ANSWER_TOO_LARGE,
  ErrorCode.ANSWER_INVALID_TEXT,
  ErrorCode.ANSWER_TOO_DEEP,
  ErrorCode.INVALID_JSON,
]);

/**
 * What the log keeps of a model answer. A model may send a `thought` (and a `reflection`) with its
 * answer; its reasoning is never exposed unless the agent is in debug, and the log feeds replay, the
 * HTTP API and the live stream, so a thought is taken out before the answer is recorded, in a way
 * that keeps the verdict: judging the logged text again (a resumed run does) gives the same result
 * as judging the answer received.
 * - In debug, or without a thought, the text is kept as received (cut to {@link LOGGED_EXCERPT_CHARS}
 *   when over the size limit).
 * - A parsed answer with a top-level `thought` is logged re-serialised without it, when that does
 *   not change the verdict (it never does for a valid answer).
 * - Otherwise (an answer that could not be parsed and may spell a thought, or whose verdict
 *   depends on its thought) the text is withheld, and the verdict is logged instead.
 *
 * Pure; `validation` is the verdict on `text`, so the common case costs one property lookup.
 *
 * @example
 * ```ts
 * const verdict = validateModelAnswer(text, rules);
 * const logged = answerForLog(text, verdict, rules, agent.debug === true);
 * ```
 */
export function answerForLog(text: string, validation: AnswerValidation, rules: AnswerRules, debug: boolean, position?: AnswerPosition): LoggedAnswer {
  const excerpt = text.length > rules.limits.maxChars ? text.slice(0, LOGGED_EXCERPT_CHARS) : text;
  if (debug) return { text: excerpt };
  if (rules.textActions !== undefined && !looksLikeJson(text) && text.length <= rules.limits.maxChars) return textForLog(text, validation, rules);
  if (validation.ok) {
    if (!hasReasoning(validation.answer)) return { text: excerpt };
    return { text: JSON.stringify(withoutThought(validation.answer)), thoughtHidden: true };
  }
  const { error } = validation;
  if (UNPARSED.has(error.code)) return mayMentionThought(excerpt) ? withheld(error) : { text: excerpt };
  // Anything else parsed (its depth was checked before), so it can be taken apart.
  const parsed = JSON.parse(text) as unknown;
  if (!isPlainObject(parsed)) return mayMentionThought(excerpt) ? withheld(error) : { text: excerpt };
  if (!hasReasoning(parsed)) return { text: excerpt };
  const stripped = JSON.stringify(withoutThought(parsed));
  // Judged as a resumed run judges it: knowing its reasoning was taken out.
  const again = validateModelAnswer(stripped, rules, stripped.length, { ...position, reasoningHidden: true });
  if (!again.ok && again.error.code === error.code) return { text: stripped, thoughtHidden: true };
  return withheld(error);
}

/** A text-form answer: its `Thought:` section taken out, when that keeps the verdict. */
function textForLog(text: string, validation: AnswerValidation, rules: AnswerRules): LoggedAnswer {
  // An answer that is only a thought has it as its message: nothing to hide.
  if (validation.ok && validation.answer.thought === undefined) return { text };
  const stripped = textWithoutThought(text);
  if (stripped === text) return { text };
  // The thought section never decides the verdict of a readable action or answer, so this only
  // withholds a rejected text whose thought, taken out, would be judged differently.
  if (!validation.ok && !sameVerdict(validation, validateModelAnswer(stripped, rules))) return withheld(validation.error);
  return { text: stripped, thoughtHidden: true };
}

function sameVerdict(a: AnswerValidation, b: AnswerValidation): boolean {
  if (!a.ok || !b.ok) return !a.ok && !b.ok && a.error.code === b.error.code;
  const { thought: _a, ...left } = a.answer;
  const { thought: _b, ...right } = b.answer;
  return JSON.stringify(left) === JSON.stringify(right);
}

/** The members of an answer that are the model's reasoning: kept out of the log unless in debug. */
const REASONING: ReadonlySet<string> = new Set(['thought', 'reflection']);

function hasReasoning(answer: object): boolean {
  return 'thought' in answer || 'reflection' in answer;
}

function withoutThought(answer: object): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(answer)) if (!REASONING.has(key)) copy[key] = value;
  return copy;
}

function withheld(rejection: ErrorInfo): LoggedAnswer {
  return { text: '', thoughtHidden: true, rejection };
}

/**
 * Could this unparsed text hold a thought? The key in any case, or a `\u` escape that could spell
 * it (JSON has only the lowercase one: `\U` is no escape, and such a text is kept).
 */
function mayMentionThought(text: string): boolean {
  return /thought|reflection/i.test(text) || text.includes('\\u');
}

function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
