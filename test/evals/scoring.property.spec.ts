import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchedInOrder, toolPathCredit } from '../../src/evals/toolPath.js';
import { checkAnswer } from '../../src/evals/answerChecks.js';
import { scoreRun } from '../../src/evals/scoreRun.js';
import type { RunSummary } from '../../src/evals/runSummary.js';

// Scoring is open-ended in its inputs (any tool path, any answer text, any JSON): its rules hold
// for all of them, not for a few hand-picked examples.

/** Tool names from a small alphabet, so repeats and near-matches come up often. */
const tool = fc.constantFrom('lookup', 'track', 'refund', 'search', 'notify');
const path = fc.array(tool, { maxLength: 8 });

/** Whether `expected` is an ordered subsequence of `actual`, checked the obvious (greedy) way. */
function isSubsequence(expected: readonly string[], actual: readonly string[]): boolean {
  let at = 0;
  for (const name of actual) if (at < expected.length && expected[at] === name) at++;
  return at === expected.length;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function summary(answer: string | undefined, tools: readonly string[] = []): RunSummary {
  return { traceId: 't', input: 'q', status: 'done', tools, iterations: 1, tokens: 0, promptTokens: 0, completionTokens: 0, durationMs: 0, ...(answer !== undefined && { answer }) };
}

describe('tool path credit (an ordered subsequence, partial credit)', () => {
  it('should give full credit exactly when the expected path is an ordered subsequence of the calls', () => {
    fc.assert(
      fc.property(path, path, (expected, actual) => {
        expect(toolPathCredit(expected, actual) === 1).toBe(isSubsequence(expected, actual));
      }),
      { numRuns: 3000 },
    );
  });

  it('should stay in [0, 1], in steps of one expected call', () => {
    fc.assert(
      fc.property(path, path, (expected, actual) => {
        const credit = toolPathCredit(expected, actual);
        expect(credit).toBeGreaterThanOrEqual(0);
        expect(credit).toBeLessThanOrEqual(1);
        // A whole number of expected calls matched (an empty path is one whole step).
        const steps = credit * Math.max(1, expected.length);
        expect(Math.abs(steps - Math.round(steps))).toBeLessThan(1e-9);
      }),
    );
  });

  it('should never lose credit when calls are added anywhere in the run', () => {
    fc.assert(
      fc.property(path, path, tool, fc.nat(), (expected, actual, extra, at) => {
        const position = at % (actual.length + 1);
        const more = [...actual.slice(0, position), extra, ...actual.slice(position)];
        expect(toolPathCredit(expected, more)).toBeGreaterThanOrEqual(toolPathCredit(expected, actual));
      }),
    );
  });

  it('should count a matched call once: dropping one expected call from the run loses at most one step', () => {
    fc.assert(
      fc.property(path, path, fc.nat(), (expected, actual, at) => {
        fc.pre(actual.length > 0);
        const position = at % actual.length;
        const fewer = [...actual.slice(0, position), ...actual.slice(position + 1)];
        const lost = matchedInOrder(expected, actual) - matchedInOrder(expected, fewer);
        expect(lost === 0 || lost === 1).toBe(true);
      }),
    );
  });

  it('should give a path its own full credit, and no credit when none of its tools is called', () => {
    fc.assert(
      fc.property(path, (expected) => {
        expect(toolPathCredit(expected, expected)).toBe(1);
        expect(toolPathCredit(expected, [])).toBe(expected.length === 0 ? 1 : 0);
      }),
    );
  });

  it('should give partial credit for the calls made in order', () => {
    expect(toolPathCredit(['lookup', 'track', 'notify'], ['track', 'lookup', 'notify'])).toBeCloseTo(2 / 3);
    expect(toolPathCredit(['lookup', 'track'], ['track', 'lookup'])).toBe(0.5);
    expect(scoreRun(summary('x', ['track']), { tools: ['lookup', 'track'] }).checks[0]).toMatchObject({ name: 'tools', pass: false, score: 0.5 });
  });
});

describe('regex expectations', () => {
  it('should match any answer that holds the (escaped) text, and fail one that does not', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ minLength: 1 }), fc.string(), (before, wanted, after) => {
        const [check] = checkAnswer({ regex: escapeRegex(wanted) }, `${before}${wanted}${after}`);
        expect(check).toMatchObject({ name: 'answer.regex', pass: true, score: 1 });
        const [other] = checkAnswer({ regex: `^${escapeRegex(wanted)}$` }, `${wanted}${wanted}`);
        expect(other?.pass).toBe(false);
      }),
    );
  });

  it('should take flags with { pattern, flags }', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z]{1,12}$/), (word) => {
        expect(checkAnswer({ regex: { pattern: `^${word}$`, flags: 'i' } }, word.toUpperCase())[0]?.pass).toBe(true);
        expect(checkAnswer({ regex: `^${word}$` }, `${word.toUpperCase()}!`)[0]?.pass).toBe(false);
      }),
    );
  });
});

describe('JSON Schema expectations', () => {
  it('should pass an answer whose JSON is the schema\'s const, whatever the value', () => {
    fc.assert(
      // Keys named like Object.prototype's methods are left out: ajv compares `const` with
      // fast-deep-equal, which calls an object's own `valueOf`/`toString` (`{"valueOf": []}` fails).
      fc.property(fc.jsonValue().filter((value) => !/"(valueOf|toString)":/.test(JSON.stringify(value))), (value) => {
        const text = JSON.stringify(value);
        // JSON has no -0: the answer's text reads back as 0.
        const [check] = checkAnswer({ schema: { const: JSON.parse(text) as unknown } }, text);
        expect(check).toMatchObject({ name: 'answer.schema', pass: true });
      }),
    );
  });

  it('should fail an answer of another type than the schema\'s, saying where', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const [check] = checkAnswer({ schema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } } }, JSON.stringify({ orderId: 7, note: text }));
        expect(check).toMatchObject({ pass: false, score: 0 });
        expect(check?.detail).toContain('/orderId must be string');
      }),
    );
  });

  it('should check the run\'s structured output before its text, and fail a text that is not JSON', () => {
    expect(checkAnswer({ schema: { type: 'object' } }, 'not json', { ok: true })[0]?.pass).toBe(true);
    expect(checkAnswer({ schema: { type: 'object' } }, 'not json')[0]).toMatchObject({ pass: false, detail: 'the answer is not JSON, and the run gave no structured output' });
  });
});

describe('a run\'s score', () => {
  it('should be the mean of its checks, passing only when all pass', () => {
    fc.assert(
      fc.property(fc.string(), path, path, (answer, expectedTools, tools) => {
        const scored = scoreRun(summary(answer, tools), { answer: { contains: answer }, tools: expectedTools, status: ['done', 'done_partial'], limits: { iterations: 0 } });
        const mean = scored.checks.reduce((sum, check) => sum + check.score, 0) / scored.checks.length;
        expect(scored.checks.map((check) => check.name)).toEqual(['answer.contains', 'tools', 'status', 'limits.iterations']);
        expect(scored.score).toBeCloseTo(mean, 12);
        // One iteration is over the limit of 0: never a pass.
        expect(scored.pass).toBe(false);
      }),
    );
  });

  it('should give contains partial credit for the texts found, and exact none for a near miss', () => {
    expect(checkAnswer({ contains: ['FS-77812', 'Lyon', 'Paris', 'A-1001'] }, 'A-1001 is in Lyon (FS-77812).')[0]).toMatchObject({ pass: false, score: 0.75, detail: 'the answer lacks "Paris"' });
    expect(checkAnswer({ exact: 'Shipped.' }, ' Shipped.\n')[0]?.pass).toBe(true);
    expect(checkAnswer({ exact: 'Shipped.' }, 'Shipped!')[0]).toMatchObject({ pass: false, score: 0 });
  });

  it('should take a judge\'s verdict as one check, and fail it when no verdict came', () => {
    const judge = { model: { provider: 'scripted' as const, answers: [] }, rubric: 'polite' };
    expect(scoreRun(summary('hi'), { answer: { judge } }, { judged: { score: 0.7, pass: true, reason: 'polite enough' } }).checks).toEqual([
      { name: 'answer.judge', pass: true, score: 0.7, detail: 'polite enough' },
    ]);
    expect(scoreRun(summary('hi'), { answer: { judge } })).toMatchObject({ pass: false, score: 0 });
  });

  it('should score 1 and pass when a case checks nothing', () => {
    expect(scoreRun(summary(undefined), {})).toEqual({ score: 1, pass: true, checks: [] });
  });
});
