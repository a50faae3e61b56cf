// What goes over the wire to the inspector is JSON whatever a context holds.
import { describe, expect, it } from 'vitest';
import { CIRCULAR, TOO_DEEP, UNREADABLE, toJsonSafe } from '../../src/inspect/jsonSafe.js';

describe('toJsonSafe', () => {
  it('turns what JSON cannot hold into data, as @statelyai/inspect names functions', () => {
    function check() {
      return true;
    }
    const value = {
      set: new Set(['a', 'b']),
      map: new Map<unknown, unknown>([['k', 1], [2, new Set([3])]]),
      fn: check,
      big: 10n ** 20n,
      nan: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      gone: undefined,
      sym: Symbol('s'),
      list: [undefined, () => 1, 1],
      error: new TypeError('bad'),
      date: new Date(0),
    };
    expect(toJsonSafe(value)).toEqual({
      set: ['a', 'b'],
      map: { k: 1, 2: [3] },
      fn: { type: 'check' },
      big: '100000000000000000000',
      nan: null,
      inf: null,
      list: [null, { type: 'anonymous' }, 1],
      error: { name: 'TypeError', message: 'bad' },
      date: '1970-01-01T00:00:00.000Z',
    });
  });

  it('marks cycles, but copies a value shared by two members', () => {
    const shared = { n: 1 };
    const cyclic: Record<string, unknown> = { a: shared, b: shared };
    cyclic.self = cyclic;
    expect(toJsonSafe(cyclic)).toEqual({ a: { n: 1 }, b: { n: 1 }, self: CIRCULAR });
  });

  it('cuts nesting deeper than the limit', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = [deep];
    const text = JSON.stringify(toJsonSafe(deep, 10));
    expect(text).toBe(`${'['.repeat(10)}"${TOO_DEEP}"${']'.repeat(10)}`);
  });

  it('keeps a __proto__ key a key, and survives getters and toJSON that throw', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}}') as object;
    const safe = toJsonSafe(parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(safe)).toBe(Object.prototype);
    expect(JSON.stringify(safe)).toBe('{"__proto__":{"polluted":true}}');
    const hostile = {
      get boom(): never {
        throw new Error('no');
      },
    };
    expect(toJsonSafe({ ok: 1, hostile })).toEqual({ ok: 1, hostile: UNREADABLE });
    expect(toJsonSafe({ ok: 1, bad: { toJSON: () => { throw new Error('no'); } } })).toEqual({ ok: 1, bad: UNREADABLE });
  });
});
