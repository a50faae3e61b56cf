/**
 * Where a JSON text stops being valid JSON. `JSON.parse`'s messages do not always give a position
 * (and differ between Node versions), so the text is scanned with a small, iterative JSON
 * grammar check (RFC 8259, the grammar `JSON.parse` implements) to find it.
 */

/** The first syntax error of a JSON text: a 0-based offset, 1-based line and column, and why. */
export interface JsonSyntaxErrorLocation {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
  readonly reason: string;
}

/** What the scanner expects next. */
const Expect = {
  /** A value (top level, after ':'). */
  Value: 0,
  /** A value or ']' (right after '['). */
  ValueOrEndArray: 1,
  /** A value after ',' in an array. */
  ValueAfterComma: 2,
  /** A key or '}' (right after '{'). */
  KeyOrEndObject: 3,
  /** A key after ',' in an object. */
  KeyAfterComma: 4,
  /** ':' after a key. */
  Colon: 5,
  /** ',' or the closing bracket, or the end of the text at top level. */
  AfterValue: 6,
} as const;
type Expect = (typeof Expect)[keyof typeof Expect];

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERALS = ['true', 'false', 'null'] as const;
const ESCAPES = '"\\/bfnrt';
const HEX = /^[0-9a-fA-F]{4}$/;

/**
 * Finds the first JSON syntax error in `text`, or returns `undefined` when `text` is valid JSON.
 *
 * @example
 * ```ts
 * locateJsonSyntaxError('{\n  "a": 1,\n}')
 * // { offset: 12, line: 3, column: 1, reason: "a trailing comma is not allowed: expected a property name in double quotes, found '}'" }
 * ```
 */
export function locateJsonSyntaxError(text: string): JsonSyntaxErrorLocation | undefined {
  const found = scan(text);
  return found === undefined ? undefined : { ...lineAndColumn(text, found.offset), offset: found.offset, reason: found.reason };
}

/** The 1-based line and column (in UTF-16 code units) of a 0-based offset in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < clamped; i = text.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return { line, column: clamped - lineStart + 1 };
}

function scan(text: string): { offset: number; reason: string } | undefined {
  const closers: string[] = [];
  let expect: Expect = Expect.Value;
  let i = 0;
  for (;;) {
    while (i < text.length && isWhitespace(text.charCodeAt(i))) i += 1;
    if (i >= text.length) {
      if (expect === Expect.AfterValue && closers.length === 0) return undefined;
      return { offset: text.length, reason: endReason(expect, closers) };
    }
    const ch = text[i] as string;
    switch (expect) {
      case Expect.Value:
      case Expect.ValueOrEndArray:
      case Expect.ValueAfterComma: {
        if (ch === ']' && expect !== Expect.Value) {
          if (expect === Expect.ValueAfterComma) return { offset: i, reason: "a trailing comma is not allowed: expected a value, found ']'" };
          closers.pop();
          i += 1;
          expect = Expect.AfterValue;
        } else if (ch === '{') {
          closers.push('}');
          i += 1;
          expect = Expect.KeyOrEndObject;
        } else if (ch === '[') {
          closers.push(']');
          i += 1;
          expect = Expect.ValueOrEndArray;
        } else if (ch === '"') {
          const end = scanString(text, i);
          if (typeof end !== 'number') return end;
          i = end;
          expect = Expect.AfterValue;
        } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
          NUMBER.lastIndex = i;
          const match = NUMBER.exec(text);
          if (match === null) return { offset: i, reason: `invalid number: expected a digit after '-'` };
          i += match[0].length;
          expect = Expect.AfterValue;
        } else {
          const literal = LITERALS.find((word) => text.startsWith(word, i));
          if (literal === undefined) return { offset: i, reason: `expected a value, found ${show(ch)}` };
          i += literal.length;
          expect = Expect.AfterValue;
        }
        break;
      }
      case Expect.KeyOrEndObject:
      case Expect.KeyAfterComma: {
        if (ch === '}' && expect === Expect.KeyOrEndObject) {
          closers.pop();
          i += 1;
          expect = Expect.AfterValue;
        } else if (ch === '"') {
          const end = scanString(text, i);
          if (typeof end !== 'number') return end;
          i = end;
          expect = Expect.Colon;
        } else {
          const trailing = ch === '}' ? 'a trailing comma is not allowed: ' : '';
          return { offset: i, reason: `${trailing}expected a property name in double quotes, found ${show(ch)}` };
        }
        break;
      }
      case Expect.Colon: {
        if (ch !== ':') return { offset: i, reason: `expected ':' after the property name, found ${show(ch)}` };
        i += 1;
        expect = Expect.Value;
        break;
      }
      case Expect.AfterValue: {
        const closer = closers[closers.length - 1];
        if (closer === undefined) return { offset: i, reason: `unexpected ${show(ch)} after the end of the JSON value` };
        if (ch === ',') {
          i += 1;
          expect = closer === '}' ? Expect.KeyAfterComma : Expect.ValueAfterComma;
        } else if (ch === closer) {
          closers.pop();
          i += 1;
        } else {
          const where = closer === '}' ? 'a property value' : 'an array element';
          return { offset: i, reason: `expected ',' or '${closer}' after ${where}, found ${show(ch)}` };
        }
        break;
      }
    }
  }
}

/** Scans the string starting at the quote at `start`; returns the offset after it, or the error. */
function scanString(text: string, start: number): number | { offset: number; reason: string } {
  let i = start + 1;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code === 0x5c) {
      const next = text[i + 1];
      if (next === undefined) break;
      if (next === 'u') {
        if (!HEX.test(text.slice(i + 2, i + 6))) return { offset: i, reason: 'invalid \\u escape: expected 4 hex digits' };
        i += 6;
        continue;
      }
      if (!ESCAPES.includes(next)) return { offset: i, reason: `invalid escape '\\${next}' in a string` };
      i += 2;
      continue;
    }
    if (code < 0x20) {
      return { offset: i, reason: 'a control character (such as a line break or tab) inside a string must be escaped (\\n, \\t)' };
    }
    i += 1;
  }
  return { offset: text.length, reason: 'a string is not closed: missing \'"\'' };
}

function endReason(expect: Expect, closers: readonly string[]): string {
  if (expect === Expect.Value && closers.length === 0) return 'the text is empty: expected a JSON value';
  const closer = closers[closers.length - 1];
  return closer === undefined
    ? 'unexpected end of the text'
    : `unexpected end of the text: ${closers.length} bracket(s) not closed, missing '${closer}'`;
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

function show(ch: string): string {
  return ch === "'" ? `"'"` : `'${ch}'`;
}
