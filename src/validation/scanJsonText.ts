import { ErrorCode, errorInfo, type ErrorInfo } from '../errors.js';

/** Keys that could reach an object's prototype if the value were ever merged naively. */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const COMMA = 0x2c; // ,
const LOWER_U = 0x75; // u

interface ObjectFrame {
  readonly keys: Set<string>;
  expectingKey: boolean;
}

/**
 * Checks what `JSON.parse` does not: nesting depth (before parsing, so 100,000 nested arrays
 * cannot exhaust the stack), duplicate keys (JSON.parse silently keeps the last) and keys such as
 * `__proto__`. One linear pass; it does not check syntax (JSON.parse does, afterwards), so on
 * malformed text it only reports what it could see.
 *
 * @returns `undefined` when the text passes, else the first problem found.
 */
export function scanJsonText(text: string, maxDepth: number): ErrorInfo | undefined {
  // null marks an array frame: arrays have no keys to track.
  const stack: (ObjectFrame | null)[] = [];
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      let escaped = false;
      i++;
      while (i < length) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) {
          escaped = true;
          if (text.charCodeAt(i + 1) === LOWER_U && isLoneSurrogateEscape(text, i)) {
            return errorInfo(ErrorCode.ANSWER_INVALID_TEXT, 'the answer escapes a lone surrogate (\\ud800–\\udfff without its pair)', {
              hint: 'answers must be well-formed Unicode',
            });
          }
          i += 2;
          continue;
        }
        if (d === QUOTE) break;
        i++;
      }
      const frame = stack[stack.length - 1];
      if (frame && frame.expectingKey) {
        frame.expectingKey = false;
        const raw = text.slice(start, Math.min(i, length));
        const key = escaped ? decodeKey(raw) : raw;
        if (key === undefined) continue;
        if (FORBIDDEN_KEYS.has(key)) {
          return errorInfo(ErrorCode.ANSWER_FORBIDDEN_KEY, `the answer uses the reserved key "${key}"`, {
            hint: 'keys named __proto__, constructor or prototype are refused',
          });
        }
        if (frame.keys.has(key)) {
          return errorInfo(ErrorCode.ANSWER_DUPLICATE_KEY, `the key "${truncate(key)}" appears twice in one object`, {
            hint: 'each key may appear once per object',
          });
        }
        frame.keys.add(key);
      }
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (stack.length >= maxDepth) {
        return errorInfo(ErrorCode.ANSWER_TOO_DEEP, `the answer nests deeper than ${maxDepth} levels`, {
          hint: 'answers are small JSON objects; deep nesting is refused before parsing',
        });
      }
      stack.push(c === OPEN_OBJECT ? { keys: new Set(), expectingKey: true } : null);
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
    } else if (c === COMMA) {
      const frame = stack[stack.length - 1];
      if (frame) frame.expectingKey = true;
    }
  }
  return undefined;
}

/** At `\\uXXXX` (index of the backslash): true for a high surrogate not followed by a low one, or a low one alone. */
function isLoneSurrogateEscape(text: string, at: number): boolean {
  const unit = escapeUnit(text, at);
  if (unit === undefined || unit < 0xd800 || unit > 0xdfff) return false;
  if (unit >= 0xdc00) return !isHighSurrogateEscapeBefore(text, at);
  const next = text.charCodeAt(at + 6) === BACKSLASH && text.charCodeAt(at + 7) === LOWER_U ? escapeUnit(text, at + 6) : undefined;
  return next === undefined || next < 0xdc00 || next > 0xdfff;
}

function isHighSurrogateEscapeBefore(text: string, at: number): boolean {
  if (at < 6 || text.charCodeAt(at - 6) !== BACKSLASH || text.charCodeAt(at - 5) !== LOWER_U) return false;
  const unit = escapeUnit(text, at - 6);
  return unit !== undefined && unit >= 0xd800 && unit <= 0xdbff;
}

function escapeUnit(text: string, at: number): number | undefined {
  const hex = text.slice(at + 2, at + 6);
  return /^[0-9a-fA-F]{4}$/.test(hex) ? Number.parseInt(hex, 16) : undefined;
}

function decodeKey(raw: string): string | undefined {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

function truncate(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}
