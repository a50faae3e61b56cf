/**
 * A short, never-throwing description of any value for messages: `'abc'`, `42`, `an array`,
 * `null`. Pure and browser-safe: flow validation and the editor word values the same way.
 *
 * @example
 * ```ts
 * describeValue([1]) // 'an array'
 * ```
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
    case 'number':
    case 'boolean':
      return String(value);
    case 'undefined':
      return 'nothing';
    case 'bigint':
      return `${value.toString()}n`;
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}
