// The file each loaded definition came from: a subagent's run records it in its log, so that log
// resumes on it (`redflow resume`), and two loads of one file are known as one agent (cycles).
const sources = new WeakMap<object, string>();

/**
 * Records that `definition` was loaded from `file` (absolute).
 *
 * @example
 * ```ts
 * rememberSource(definition, '/agents/reviewer.agent.md');
 * ```
 */
export function rememberSource(definition: object, file: string): void {
  sources.set(definition, file);
}

/**
 * The file `definition` was loaded from, when it was loaded from one.
 *
 * @example
 * ```ts
 * definitionSource(await loadAgentDefinitionModule('reviewer.agent.md')); // '/…/reviewer.agent.md'
 * ```
 */
export function definitionSource(definition: object): string | undefined {
  return sources.get(definition);
}
