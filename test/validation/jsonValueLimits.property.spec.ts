// The one check of values against the answer limits (inputs, tool replies, memory records): it
// measures what JSON.stringify would write, and stops on any value, however deep, cyclic or shared.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLimitBreach } from '../../src/validation/jsonValueLimits.js';
import { defaultAnswerLimits } from '../../src/validation/validateModelAnswer.js';

/** Nesting depth of objects and arrays, as the limit counts it (recursive: for small test values only). */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

function nestedArrays(depth: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

describe('jsonLimitBreach', () => {
  it('should agree with JSON.stringify and the nesting depth on any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ depthSize: 'large', maxDepth: 12 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 2, max: 400 }), (value, maxDepth, maxChars) => {
        const breach = jsonLimitBreach(value, { maxDepth, maxChars });
        const tooDeep = depthOf(value) > maxDepth;
        const tooLong = JSON.stringify(value).length > maxChars;
        // A breach exactly when a limit is over, and the one it names is.
        const namedIsOver = breach === undefined ? undefined : breach.kind === 'depth' ? tooDeep : tooLong;
        expect(namedIsOver).toBe(tooDeep || tooLong ? true : undefined);
      }),
      { numRuns: 3000 },
    );
  });

  it('should measure exactly what JSON.stringify writes: escapes, toJSON, left-out members', () => {
    const value = { quote: 'a"b\\c\n\u2028', when: new Date(0), skip: undefined, fn: () => 1, list: [undefined, () => 1, NaN, -0, 1e21], nested: { ok: true } };
    const length = JSON.stringify(value).length;
    expect(jsonLimitBreach(value, { maxDepth: 64, maxChars: length })).toBeUndefined();
    expect(jsonLimitBreach(value, { maxDepth: 64, maxChars: length - 1 })).toEqual({ kind: 'size', maxChars: length - 1 });
  });

  it('should allow exactly 64 levels by default and refuse 65, 10,000 or 100,000 without overflowing', () => {
    expect(jsonLimitBreach(nestedArrays(64), defaultAnswerLimits)).toBeUndefined();
    for (const depth of [65, 10_000, 100_000]) {
      expect(jsonLimitBreach(nestedArrays(depth), defaultAnswerLimits)).toEqual({ kind: 'depth', maxDepth: 64 });
    }
  });

  it('should stop on a cycle (too deep) and on a value sharing one part 2^60 times (too large)', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(jsonLimitBreach(cycle, defaultAnswerLimits)?.kind).toBe('depth');
    let shared: unknown = 'x'.repeat(10);
    for (let i = 0; i < 60; i++) shared = [shared, shared];
    const started = Date.now();
    expect(jsonLimitBreach(shared, defaultAnswerLimits)).toEqual({ kind: 'size', maxChars: 1_000_000 });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
