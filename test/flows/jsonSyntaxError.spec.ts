import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineAndColumn, locateJsonSyntaxError } from '../../src/files/jsonSyntaxError.js';

describe('locateJsonSyntaxError', () => {
  it.each([
    ['{\n  "a": 1,\n}', 3, 1, 'trailing comma'],
    ['[1, 2,]', 1, 7, 'trailing comma'],
    ['{"a": 1\n "b": 2}', 2, 2, "expected ',' or '}'"],
    ['{a: 1}', 1, 2, 'property name in double quotes'],
    ['{"a" 1}', 1, 6, "expected ':'"],
    ['"abc', 1, 5, 'not closed'],
    ['"a\tb"', 1, 3, 'control character'],
    ['"\\x"', 1, 2, 'invalid escape'],
    ['"\\u12G4"', 1, 2, '\\u escape'],
    ['[1] 2', 1, 5, 'after the end'],
    ['', 1, 1, 'empty'],
    ['  \n  ', 2, 3, 'empty'],
    ['{"a": [1, {"b": 2}', 1, 19, "missing ']'"],
    ['-', 1, 1, 'invalid number'],
    ['tru', 1, 1, 'expected a value'],
    ["{'a': 1}", 1, 2, 'property name'],
  ])('should locate the error in %j at line %i, column %i', (text, line, column, reason) => {
    const found = locateJsonSyntaxError(text);
    expect(found).toMatchObject({ line, column });
    expect(found?.reason).toContain(reason);
    expect(() => JSON.parse(text)).toThrow();
  });

  it('should find nothing in valid JSON', () => {
    for (const text of ['{}', '[]', '0', '-0.5e+10', '"\\u00e9\\n"', ' true ', 'null', '{"a":[{"b":false}]}', '"\uD800"']) {
      expect(locateJsonSyntaxError(text), text).toBeUndefined();
    }
  });

  it('should handle very deep nesting without a stack overflow', () => {
    expect(locateJsonSyntaxError(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)).toBeUndefined();
    expect(locateJsonSyntaxError('['.repeat(200_000))?.reason).toContain("missing ']'");
  });

  it('should agree with JSON.parse on whether a text is valid', () => {
    const almostJson = fc
      .tuple(fc.json(), fc.nat(), fc.constantFrom('', ',', '}', ']', '"', ':', '\\', ' ', '\n', 'x', '0', '.', '-', 'e', '\u0001'), fc.boolean())
      .map(([json, at, insert, remove]) => {
        const i = json.length === 0 ? 0 : at % json.length;
        return json.slice(0, i) + insert + json.slice(remove ? i + 1 : i);
      });
    fc.assert(
      fc.property(fc.oneof(fc.json(), almostJson, fc.string(), fc.string({ unit: 'binary' })), (text) => {
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        const found = locateJsonSyntaxError(text);
        expect(found === undefined).toBe(parses);
        // Where an error is found, it is within the text.
        expect(found?.offset ?? 0).toBeGreaterThanOrEqual(0);
        expect(found?.offset ?? 0).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('lineAndColumn', () => {
  it('should count lines and columns from 1', () => {
    expect(lineAndColumn('ab\ncd\n', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\ncd\n', 2)).toEqual({ line: 1, column: 3 });
    expect(lineAndColumn('ab\ncd\n', 3)).toEqual({ line: 2, column: 1 });
    expect(lineAndColumn('ab\ncd\n', 6)).toEqual({ line: 3, column: 1 });
  });
});
