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
