import type { AgentCoreReactConfig, ToolSpec } from '../contracts/schema-types.js';

/** One tool the model may call, as the decision contract carries it. */
export interface DecisionTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/**
 * What an answer of a run may be, as data a model actor can turn into its provider's constrained
 * output (a JSON Schema, a forced tool, native tools): the allowed tools with their input schemas,
 * whether the agent reasons explicitly, and its outputSchema. It rides on each `ModelRequest`
 * (which crosses NATS), so a model worker needs nothing of the flow; the core still validates
 * every answer with its own rules.
 *
 * @example
 * ```ts
 * const contract = decisionContractFor(agent, toolSpecs);
 * const request: ModelRequest = { traceId, iteration: 1, messages, decision: contract };
 * ```
 */
export interface DecisionContract {
  /**
   * Equal for equal contracts, in any process (a hash of the rest): what a model actor caches the
   * compiled schema by, since a contract that crossed NATS is a new object at each request.
   */
  readonly key: string;
  readonly tools: readonly DecisionTool[];
  /** The agent's reasoning is "explicit": answers carry thought, reflection, decision and reason. */
  readonly explicitReasoning: boolean;
  /** The agent's outputSchema: a final answer may carry an `output` matching it. */
  readonly outputSchema?: unknown;
}

/** The contract last built for a list of tool specs, and the agent settings it was built from. */
interface CachedContract {
  readonly allowedTools: readonly string[];
  readonly reasoning: AgentCoreReactConfig['reasoning'];
  readonly outputSchema: AgentCoreReactConfig['outputSchema'];
  readonly contract: DecisionContract;
}

const contractByTools = new WeakMap<readonly ToolSpec[], CachedContract>();

/**
 * The decision contract of a run of `agent` with `tools` (only those in its `allowedTools`),
 * built once for the runs that share the tool list and those settings, as the runs of one flow
 * do. A tool list is read when it is first seen: give another array rather than changing one.
 *
 * @example
 * ```ts
 * decisionContractFor({ allowedTools: ['add'] }, [{ name: 'add', description: 'Adds', inputSchema: { type: 'object' } }]).tools[0]?.name; // 'add'
 * ```
 */
export function decisionContractFor(
  agent: Pick<AgentCoreReactConfig, 'allowedTools' | 'reasoning' | 'outputSchema'>,
  tools: readonly ToolSpec[],
): DecisionContract {
  const cached = contractByTools.get(tools);
  if (cached !== undefined && cached.allowedTools === agent.allowedTools && cached.reasoning === agent.reasoning && cached.outputSchema === agent.outputSchema) {
    return cached.contract;
  }
  const allowed = new Set(agent.allowedTools);
  const content = {
    tools: tools.filter((tool) => allowed.has(tool.name)).map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    explicitReasoning: agent.reasoning === 'explicit',
    ...(agent.outputSchema !== undefined && { outputSchema: agent.outputSchema }),
  };
  const contract: DecisionContract = { key: contentKey(JSON.stringify(content)), ...content };
  contractByTools.set(tools, { allowedTools: agent.allowedTools, reasoning: agent.reasoning, outputSchema: agent.outputSchema, contract });
  return contract;
}

/** Two FNV-1a hashes (different offsets) and the length: a cache key, not a security measure. */
function contentKey(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x9e3779b9;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193);
  }
  return `${(a >>> 0).toString(36)}${(b >>> 0).toString(36)}-${text.length.toString(36)}`;
}
