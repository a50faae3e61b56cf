/**
 * The run input as typed in the toolbar, read the way `redflow run --input` reads it: a JSON object
 * or array is parsed, anything else is taken as text.
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
