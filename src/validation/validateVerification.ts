import type { VerificationCheck } from '../contracts/schema-types.js';
import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';

/** The four checks of a verification, in the order the verifier is asked them (seed 003's Chain of Verification). */
export const VERIFICATION_CHECKS = ['completeness', 'consistency', 'correctness', 'constraints'] as const;

/** One of {@link VERIFICATION_CHECKS}. */
export type VerificationCheckName = (typeof VERIFICATION_CHECKS)[number];

/** A verifier's answer judged: its four checks (and whether all passed), or why it is not the verification shape. */
export type VerificationVerdict =
  | { readonly ok: true; readonly passed: boolean; readonly checks: readonly VerificationCheck[] }
  | { readonly ok: false; readonly error: ErrorInfo };

/** The shape the verifier answers in, as its prompt shows it (and this file's errors quote it). */
export const VERIFICATION_SHAPE =
  '{"checks":[{"name":"completeness","passed":true,"basis":"…"},{"name":"consistency","passed":true,"basis":"…"},{"name":"correctness","passed":true,"basis":"…"},{"name":"constraints","passed":false,"basis":"…"}]}';

/** Most of an answer an error message quotes. */
const QUOTED_CHARS = 200;

/** A model may wrap its JSON in a Markdown code fence: the JSON inside it. */
const FENCED = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

function invalid(message: string): VerificationVerdict {
  return { ok: false, error: errorInfo(ErrorCode.VERIFICATION_INVALID, message, { hint: `the verifier must answer with one JSON object: ${VERIFICATION_SHAPE}` }) };
}

function quoted(text: string): string {
  return JSON.stringify(text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Judges a verifier's answer: one JSON object whose `checks` hold each of the four checks once,
 * each with `passed` (a boolean) and `basis` (what it rests on, not empty). Anything else is a
 * `VERIFICATION_INVALID` error saying what is wrong: a verification that cannot be read fails.
 * Pure and deterministic, so a resumed run judges a logged answer the same way.
 *
 * @example
 * ```ts
 * const verdict = validateVerification('{"checks":[{"name":"completeness","passed":true,"basis":"all files scanned"}]}');
 * verdict.ok // false: consistency, correctness and constraints are missing
 * ```
 */
export function validateVerification(text: string): VerificationVerdict {
  const trimmed = text.trim();
  const json = FENCED.exec(trimmed)?.[1] ?? trimmed;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return invalid(`the verifier's answer is not JSON: ${quoted(trimmed)}`);
  }
  if (!isObject(value) || !Array.isArray(value.checks)) return invalid(`the verifier's answer has no "checks" array: ${quoted(trimmed)}`);
  const checks: VerificationCheck[] = [];
  const seen = new Set<string>();
  for (const [i, check] of value.checks.entries()) {
    if (!isObject(check)) return invalid(`checks[${i}] is not an object`);
    const { name, passed, basis } = check;
    if (typeof name !== 'string' || !(VERIFICATION_CHECKS as readonly string[]).includes(name)) {
      return invalid(`checks[${i}] has the name ${JSON.stringify(name)}, not one of ${VERIFICATION_CHECKS.join(', ')}`);
    }
    if (seen.has(name)) return invalid(`the check "${name}" is answered twice`);
    if (typeof passed !== 'boolean') return invalid(`the check "${name}" has no boolean "passed"`);
    if (typeof basis !== 'string' || basis.trim() === '') return invalid(`the check "${name}" does not say what it rests on (an empty "basis")`);
    seen.add(name);
    checks.push({ name: name as VerificationCheckName, passed, basis });
  }
  const missing = VERIFICATION_CHECKS.filter((name) => !seen.has(name));
  if (missing.length > 0) return invalid(`the verifier's answer lacks the check${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  return { ok: true, passed: checks.every((check) => check.passed), checks };
}
