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
