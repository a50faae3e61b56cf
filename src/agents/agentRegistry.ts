import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { checkAgentDefinition, type AgentDefinition } from './agentDefinition.js';

/**
 * Agent definitions by name: each checked when it is registered (so a broken one fails at startup,
 * not at its first run), looked up in constant time (a `Map`). An application keeps one, usually
 * {@link agentRegistry}; tests make their own.
 *
 * @example
 * ```ts
 * agentRegistry.register(reviewer);
 * const result = await new AgentExecutor().execute(agentRegistry.get('reviewer')!, { inputs });
 * ```
 */
export class AgentRegistry {
  readonly #agents = new Map<string, AgentDefinition>();

  /**
   * Adds `definition` under its name.
   *
   * @throws RedflowError `AGENT_DEFINITION_INVALID` (see `checkAgentDefinition`);
   *   `AGENT_ALREADY_REGISTERED` when the name is taken (unregister the old one first).
   */
  register<TOutput>(definition: AgentDefinition<TOutput>): void {
    checkAgentDefinition(definition);
    if (this.#agents.has(definition.name)) {
      throw new RedflowError(
        errorInfo(ErrorCode.AGENT_ALREADY_REGISTERED, `an agent named "${definition.name}" is registered already`, {
          hint: 'give each agent its own name, or unregister the old one first',
          path: 'name',
        }),
      );
    }
    this.#agents.set(definition.name, definition as AgentDefinition);
  }

  /**
   * Registers every `.agent.md` file of `dir` (not its subfolders), in name order, and returns them.
   *
   * @throws RedflowError a file's `AGENT_MARKDOWN_INVALID` (with its line) or another load error;
   *   `AGENT_ALREADY_REGISTERED`. Nothing is registered when one file fails.
   * @example
   * ```ts
   * const agents = await agentRegistry.loadDirectory('agents');
   * ```
   */
  async loadDirectory(dir: string): Promise<AgentDefinition[]> {
    const { loadAgentDefinitionModule } = await import('./definitionModule.js');
    const names = (await readdir(dir)).filter((name) => name.toLowerCase().endsWith('.agent.md')).sort();
    const loaded: AgentDefinition[] = [];
    for (const name of names) loaded.push(await loadAgentDefinitionModule(path.join(dir, name)));
    const taken = loaded.find((definition, i) => this.#agents.has(definition.name) || loaded.findIndex((other) => other.name === definition.name) !== i);
    if (taken !== undefined) {
      throw new RedflowError(
        errorInfo(ErrorCode.AGENT_ALREADY_REGISTERED, `an agent named "${taken.name}" is registered already (loading ${dir})`, { hint: 'give each agent its own name', path: 'name' }),
      );
    }
    for (const definition of loaded) this.register(definition);
    return loaded;
  }

  /** The agent named `name`, or `undefined`. */
  get(name: string): AgentDefinition | undefined {
    return this.#agents.get(name);
  }

  /** True when an agent is registered under `name`. */
  has(name: string): boolean {
    return this.#agents.has(name);
  }

  /** Every registered agent, in the order they were registered. */
  getAll(): AgentDefinition[] {
    return [...this.#agents.values()];
  }

  /** Removes the agent named `name`; true when there was one. */
  unregister(name: string): boolean {
    return this.#agents.delete(name);
  }
}

/** The application's registry: one per process (per copy of Redflow loaded). */
export const agentRegistry = new AgentRegistry();
