import type { AnswerLimits } from './validateModelAnswer.js';

/** What makes a value break {@link AnswerLimits}: its nesting, or its size as JSON. */
export type JsonLimitBreach =
  | { readonly kind: 'depth'; readonly maxDepth: number }
  | { readonly kind: 'size'; readonly maxChars: number };

/**
 * Checks a value already in memory (a run's input, a tool's reply, a memory record) against the
 * limits model answers get as text: nesting depth of objects and arrays, and length of its JSON
 * text. `scanJsonText` checks text before it is parsed; this checks what was parsed elsewhere or
 * built in code, so that nothing past the limits reaches the prompt builder or the log (both
 * recursive: 10,000 nested arrays overflow their stack).
 *
 * The walk is iterative (an explicit stack), so no input can overflow it, and it stops at the
 * first breach: a cycle shows up as too deep, a structure sharing one sub-value many times as too
 * large, so the work is bounded by the limits, not by the value. Sizes are counted as
 * `JSON.stringify` would write them (strings with their escapes, `toJSON` applied, `undefined`
 * members left out).
 *
 * @returns `undefined` when the value is within the limits, else which limit it breaks.
 * @example
 * ```ts
 * let deep: unknown = [];
 * for (let i = 0; i < 10_000; i++) deep = [deep];
 * jsonLimitBreach(deep, defaultAnswerLimits); // { kind: 'depth', maxDepth: 64 }
 * ```
 */
export function jsonLimitBreach(value: unknown, limits: AnswerLimits): JsonLimitBreach | undefined {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  let chars = 0;
  while (stack.length > 0) {
    const next = stack.pop() as { value: unknown; depth: number };
    const item = asSerialized(next.value);
    if (typeof item === 'object' && item !== null) {
      if (next.depth >= limits.maxDepth) return { kind: 'depth', maxDepth: limits.maxDepth };
      const depth = next.depth + 1;
      if (Array.isArray(item)) {
        // Brackets and commas; a member JSON cannot write (undefined, a function) is written as null.
        chars += 2 + Math.max(0, item.length - 1);
        for (let i = item.length - 1; i >= 0; i--) {
          const member = asSerialized(item[i]);
          if (isOmitted(member)) chars += 4;
          else stack.push({ value: member, depth });
        }
      } else {
        let written = 0;
        chars += 2;
        for (const key of Object.keys(item)) {
          const member = asSerialized((item as Record<string, unknown>)[key]);
          if (isOmitted(member)) continue;
          // The key as a JSON string, its colon, and the comma before it (but the first).
          chars += JSON.stringify(key).length + 1 + (written > 0 ? 1 : 0);
          written += 1;
          stack.push({ value: member, depth });
          if (chars > limits.maxChars) return { kind: 'size', maxChars: limits.maxChars };
        }
      }
    } else {
      chars += scalarLength(item, limits.maxChars);
    }
    if (chars > limits.maxChars) return { kind: 'size', maxChars: limits.maxChars };
  }
  return undefined;
}

/** What `JSON.stringify` writes for `value`: the result of its `toJSON`, when it has one. */
function asSerialized(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON: () => unknown }).toJSON();
  }
  return value;
}

/** Values JSON leaves out of an object (and writes as null in an array). */
function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** The length of a scalar as JSON; a string already over `maxChars` is not written out to be measured. */
function scalarLength(value: unknown, maxChars: number): number {
  switch (typeof value) {
    case 'string':
      // Escapes only lengthen a string.
      return value.length + 2 > maxChars ? value.length + 2 : JSON.stringify(value).length;
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      return String(value).length;
    default:
      // null, and a top-level value JSON cannot write.
      return 4;
  }
}
