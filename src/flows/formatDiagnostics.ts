import type { FlowDiagnostic } from './diagnostics.js';

/**
 * One readable line for a diagnostic: `severity CODE path: message (hint)`. A diagnostic about the
 * whole flow (no path) shows `flow` as its path.
 *
 * @example
 * ```ts
 * formatDiagnostic({ severity: 'error', code: 'NO_MODEL', path: 'nodes[1]', message: "agent.core 'agent1' has no model connected", hint: 'add a model.llm node' })
 * // "error NO_MODEL nodes[1]: agent.core 'agent1' has no model connected (add a model.llm node)"
 * ```
 */
export function formatDiagnostic(diagnostic: FlowDiagnostic): string {
  const hint = diagnostic.hint === undefined || diagnostic.hint === '' ? '' : ` (${diagnostic.hint})`;
  return `${diagnostic.severity} ${diagnostic.code} ${diagnostic.path ?? 'flow'}: ${diagnostic.message}${hint}`;
}

/**
 * The diagnostics as text, one line each, in the order given.
 *
 * @example
 * ```ts
 * const result = await loadFlowFile('flow.json');
 * if (!result.validation.ok) console.error(formatDiagnostics(result.validation.errors));
 * console.warn(formatDiagnostics(result.validation.warnings));
 * ```
 */
export function formatDiagnostics(diagnostics: readonly FlowDiagnostic[]): string {
  return diagnostics.map(formatDiagnostic).join('\n');
}
