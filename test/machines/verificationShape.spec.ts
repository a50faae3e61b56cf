import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { validateVerification, verificationOf, VERIFICATION_CHECKS } from '../../src/machines/verification.js';

const check = (name: string, passed = true, basis = `${name} holds`) => ({ name, passed, basis });
const all = (passed = true) => VERIFICATION_CHECKS.map((name) => check(name, passed));

describe("the verifier's answer", () => {
  it('should be read with each check and passed only when all four passed', () => {
    expect(validateVerification(JSON.stringify({ checks: all() }))).toMatchObject({ ok: true, passed: true });
    const oneFailed = validateVerification(JSON.stringify({ checks: [...all().slice(0, 3), check('constraints', false, 'the output misses the schema')] }));
    expect(oneFailed).toMatchObject({ ok: true, passed: false });
    expect(oneFailed.ok && oneFailed.checks[3]).toEqual({ name: 'constraints', passed: false, basis: 'the output misses the schema' });
  });

  it('should take the JSON out of a Markdown code fence', () => {
    expect(validateVerification(`\`\`\`json\n${JSON.stringify({ checks: all() })}\n\`\`\``)).toMatchObject({ ok: true, passed: true });
  });

  it.each([
    ['not JSON', 'All four checks pass.', /is not JSON/],
    ['no checks array', '{"verdict":"ok"}', /no "checks" array/],
    ['a check missing', JSON.stringify({ checks: all().slice(0, 3) }), /lacks the check constraints/],
    ['a check twice', JSON.stringify({ checks: [...all(), check('correctness')] }), /"correctness" is answered twice/],
    ['an unknown check', JSON.stringify({ checks: [...all().slice(0, 3), check('style')] }), /the name "style", not one of/],
    ['passed not a boolean', JSON.stringify({ checks: [...all().slice(0, 3), { name: 'constraints', passed: 'yes', basis: 'ok' }] }), /no boolean "passed"/],
    ['an empty basis', JSON.stringify({ checks: [...all().slice(0, 3), check('constraints', true, ' ')] }), /does not say what it rests on/],
  ])('should refuse %s with VERIFICATION_INVALID saying what is wrong', (_what, text, message) => {
    const verdict = validateVerification(text);
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.error.code).toBe(ErrorCode.VERIFICATION_INVALID);
    expect(verdict.error.message).toMatch(message);
    expect(verdict.error.hint).toContain('"checks"');
  });
});

describe("an agent's verification settings", () => {
  it('should be off by default and for "off", with two failures allowed otherwise', () => {
    expect(verificationOf({})).toBeUndefined();
    expect(verificationOf({ verification: 'off' })).toBeUndefined();
    expect(verificationOf({ verification: 'self' })).toEqual({ criteria: [], maxFailures: 2 });
    expect(verificationOf({ verification: { rubric: 'cite lines', maxFailures: 4, criteria: ['a'] } })).toEqual({ rubric: 'cite lines', criteria: ['a'], maxFailures: 4 });
  });
});
