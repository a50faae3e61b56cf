import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ErrorCode } from '../../src/errors.js';
import { appendTurn } from '../../src/actors/memory/conversationMemory.js';

function turn(i: number) {
  return { input: `q${i}`, answer: `a${i}`, outcome: 'done', traceId: `t${i}` };
}

describe('appendTurn', () => {
  it('should start a turns list when there is no memory', () => {
    expect(appendTurn(undefined, turn(1), 5)).toEqual({ turns: [turn(1)] });
  });

  it('should keep only the last maxTurns turns, oldest first', () => {
    let memory = appendTurn(undefined, turn(1), 3);
    for (let i = 2; i <= 5; i++) memory = appendTurn(memory, turn(i), 3);

    expect(memory.turns).toEqual([turn(3), turn(4), turn(5)]);
  });

  it('should preserve the other keys and not change the memory it was given', () => {
    const memory = { profile: { name: 'Ada' }, turns: [turn(1)] };

    const next = appendTurn(memory, turn(2), 10);

    expect(next).toEqual({ profile: { name: 'Ada' }, turns: [turn(1), turn(2)] });
    expect(memory.turns).toEqual([turn(1)]);
  });

  it('should leave out an undefined answer', () => {
    const next = appendTurn(undefined, { input: 'q', outcome: 'escalate', traceId: 't' }, 2);

    expect(next.turns).toEqual([{ input: 'q', outcome: 'escalate', traceId: 't' }]);
    expect(Object.keys((next.turns as object[])[0]!)).not.toContain('answer');
  });

  it('should start afresh when turns is not an array', () => {
    expect(appendTurn({ turns: 'garbage', keep: 1 }, turn(1), 2)).toEqual({ turns: [turn(1)], keep: 1 });
  });

  it('should refuse a maxTurns that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => appendTurn(undefined, turn(1), bad)).toThrow(expect.objectContaining({ code: ErrorCode.NODE_CONFIG_INVALID }));
    }
  });

  it('should always hold min(appended, maxTurns) turns ending with the newest', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 50 }), (maxTurns, count) => {
        let memory: Record<string, unknown> | undefined;
        for (let i = 1; i <= count; i++) memory = appendTurn(memory, turn(i), maxTurns);
        const turns = memory?.turns as Array<{ traceId: string }>;
        expect(turns).toHaveLength(Math.min(count, maxTurns));
        expect(turns.at(-1)?.traceId).toBe(`t${count}`);
      }),
    );
  });
});
