/**
 * A run's input as a person types it (`redflow run --input`, the editor's input box): a JSON
 * object or array is parsed, anything else is taken as text. Browser-safe, shared by both.
 *
 * @example
 * ```ts
 * parseRunInput('{"order": "A-1"}') // { order: 'A-1' }
 * parseRunInput('Where is A-1?')   // 'Where is A-1?'
 * ```
 */
export function parseRunInput(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
