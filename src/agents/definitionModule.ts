import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { isTypeScriptPath, importUserModule } from '../typeScriptModules.js';
import { checkAgentDefinition, type AgentDefinition } from './agentDefinition.js';
import { rememberSource } from './definitionSources.js';

/** Extensions of JavaScript modules a definition may be in (TypeScript ones too; the rest are flow files). */
const JAVASCRIPT = new Set(['.js', '.mjs', '.cjs']);

/** True when `file` names an agent written as Markdown (`.agent.md`). */
export function isAgentMarkdownPath(file: string): boolean {
  return file.toLowerCase().endsWith('.agent.md');
}

/** True when `file` names an agent definition (a JavaScript or TypeScript module, or an `.agent.md` file), not a flow file. */
export function isDefinitionModulePath(file: string): boolean {
  return JAVASCRIPT.has(path.extname(file).toLowerCase()) || isTypeScriptPath(file) || isAgentMarkdownPath(file);
}

function invalid(shown: string, why: string, cause?: unknown): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.AGENT_DEFINITION_INVALID, `${shown} ${why}`, {
      hint: 'the module must export an AgentDefinition as its default export: export default { name, description, promptConfig, modelConfig, toolConfig, … } satisfies AgentDefinition',
    }),
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Imports the module at `file` and returns the {@link AgentDefinition} it exports by default,
 * checked; an `.agent.md` file is read as an agent written as Markdown (`loadAgentMarkdown`). TypeScript modules are imported with Node's own type stripping where it has it, else with tsx, an optional peer dependency loaded only then (`importUserModule`).
 *
 * @throws RedflowError `FLOW_NOT_FOUND` when there is no such file; `DEPENDENCY_MISSING` for a
 *   TypeScript module without tsx installed; `AGENT_DEFINITION_INVALID` when the module fails to
 *   load, has no default export, or exports something that is not a valid definition.
 *
 * @example
 * ```ts
 * const definition = await loadAgentDefinitionModule('agents/reviewer.ts');
 * ```
 */
export async function loadAgentDefinitionModule(file: string): Promise<AgentDefinition> {
  // The Markdown and YAML readers load only when an `.agent.md` file is.
  if (isAgentMarkdownPath(file)) return (await import('./agentMarkdownFile.js')).loadAgentMarkdown(file, { loadModule: loadAgentDefinitionModule });
  const absolute = path.resolve(file);
  const shown = JSON.stringify(file);
  try {
    if (!(await stat(absolute)).isFile()) throw new Error('not a file');
  } catch {
    throw new RedflowError(errorInfo(ErrorCode.FLOW_NOT_FOUND, `there is no agent definition module ${shown}`, { hint: 'give the path of a .ts or .js file exporting an AgentDefinition' }));
  }
  let namespace: Record<string, unknown>;
  try {
    namespace = await importUserModule(absolute, 'an agent definition written in TypeScript');
  } catch (error) {
    // A missing tsx is not a broken definition: it loads once the package is installed.
    if (error instanceof RedflowError && error.code === ErrorCode.DEPENDENCY_MISSING) throw error;
    throw invalid(shown, `failed to load: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  let definition = namespace.default;
  // A module compiled to CommonJS shows up as `{ default: { __esModule, default: definition } }`.
  if (typeof definition === 'object' && definition !== null && (definition as Record<string, unknown>).__esModule === true) {
    definition = (definition as Record<string, unknown>).default;
  }
  if (definition === undefined) throw invalid(shown, `has no default export (it exports: ${Object.keys(namespace).join(', ') || 'nothing'})`);
  checkAgentDefinition(definition);
  rememberSource(definition, absolute);
  return definition;
}
