/**
 * The node types of a flow graph, the role each one plays for the agent, and the kinds of edges.
 *
 * Pure TypeScript with no imports: the browser editor shares this file with the runtime.
 */

/**
 * Every node type a flow may contain (`schemas/flow.schema.json`).
 *
 * @example
 * ```ts
 * if (node.type === NodeType.AgentCore) { ... }
 * ```
 */
export const NodeType = {
  TriggerInput: 'trigger.input',
  AgentCore: 'agent.core',
  ModelLlm: 'model.llm',
  MemoryKv: 'memory.kv',
  ToolHttp: 'tool.http',
  ToolModule: 'tool.module',
  ToolPostgres: 'tool.postgres',
  /**
   * An MCP server (stdio or Streamable HTTP): its tools become the agent's tools. Its name in
   * `allowedTools` and `requiresApproval` stands for all of them.
   */
  ToolMcp: 'tool.mcp',
  /** A tool the run's client executes: the run waits for its result (see `executor: "client"`). */
  ToolClient: 'tool.client',
  /**
   * A tool whose body is a Node-RED flow (`redflow-tool-in` … `redflow-tool-out`): a flow with one
   * runs in Node-RED only (`FLOW_TOOL_NODE_RED_ONLY` elsewhere).
   */
  ToolFlow: 'tool.flow',
  /**
   * A subagent: another flow file, run as a tool of this agent (its input `{ task }` is the child
   * run's input; the child run has its own log, linked to the call that started it).
   */
  AgentRef: 'agent.ref',
  /**
   * A remote agent reached over A2A: called like a subagent (input `{ task }`), its answer is the
   * call's result.
   */
  AgentA2a: 'agent.a2a',
  ResponseChat: 'response.chat',
  ResponseEnd: 'response.end',
} as const;

/** One of {@link NodeType}'s values. */
export type NodeType = (typeof NodeType)[keyof typeof NodeType];

/** What a node is for, as far as edges are concerned. */
export const NodeRole = {
  Input: 'input',
  Core: 'core',
  Model: 'model',
  Tool: 'tool',
  Memory: 'memory',
  Output: 'output',
} as const;

/** One of {@link NodeRole}'s values. */
export type NodeRole = (typeof NodeRole)[keyof typeof NodeRole];

/** The kind of an edge: what the connection carries (see the strict edge rules in `edgeRules.ts`). */
export const EdgeKind = {
  Data: 'data',
  Model: 'model',
  Tool: 'tool',
  Memory: 'memory',
} as const;

/** One of {@link EdgeKind}'s values. */
export type EdgeKind = (typeof EdgeKind)[keyof typeof EdgeKind];

/** The role of each node type. */
export const NodeTypeRole: { readonly [T in NodeType]: NodeRole } = {
  [NodeType.TriggerInput]: NodeRole.Input,
  [NodeType.AgentCore]: NodeRole.Core,
  [NodeType.ModelLlm]: NodeRole.Model,
  [NodeType.MemoryKv]: NodeRole.Memory,
  [NodeType.ToolHttp]: NodeRole.Tool,
  [NodeType.ToolModule]: NodeRole.Tool,
  [NodeType.ToolPostgres]: NodeRole.Tool,
  [NodeType.ToolMcp]: NodeRole.Tool,
  [NodeType.ToolClient]: NodeRole.Tool,
  [NodeType.ToolFlow]: NodeRole.Tool,
  [NodeType.AgentRef]: NodeRole.Tool,
  [NodeType.AgentA2a]: NodeRole.Tool,
  [NodeType.ResponseChat]: NodeRole.Output,
  [NodeType.ResponseEnd]: NodeRole.Output,
};

/** All node types, in the order of {@link NodeType}. */
export const NODE_TYPES: readonly NodeType[] = Object.freeze(Object.values(NodeType));

/** All edge kinds, in the order of {@link EdgeKind}. */
export const EDGE_KINDS: readonly EdgeKind[] = Object.freeze(Object.values(EdgeKind));

/**
 * True when `value` is one of the known node types.
 *
 * @example
 * ```ts
 * isNodeType('tool.http') // true
 * isNodeType('tool.mysql') // false
 * ```
 */
export function isNodeType(value: unknown): value is NodeType {
  return typeof value === 'string' && (NODE_TYPES as readonly string[]).includes(value);
}

/** True when `value` is one of the edge kinds. */
export function isEdgeKind(value: unknown): value is EdgeKind {
  return typeof value === 'string' && (EDGE_KINDS as readonly string[]).includes(value);
}

/**
 * The role of a node type, or `undefined` for a type Redflow does not know.
 *
 * @example
 * ```ts
 * roleOf('tool.module') // 'tool'
 * ```
 */
export function roleOf(type: unknown): NodeRole | undefined {
  return isNodeType(type) ? NodeTypeRole[type] : undefined;
}

/** True for `trigger.input`. */
export function isInputType(type: unknown): boolean {
  return roleOf(type) === NodeRole.Input;
}

/** True for `agent.core`. */
export function isCoreType(type: unknown): boolean {
  return roleOf(type) === NodeRole.Core;
}

/** True for `model.llm`. */
export function isModelType(type: unknown): boolean {
  return roleOf(type) === NodeRole.Model;
}

/** True for the tool types (`tool.http`, `tool.module`, `tool.postgres`, `tool.mcp`, `tool.client`, `tool.flow`) `agent.ref` (a subagent, called like a tool) and `agent.a2a` (a remote A2A agent). */
export function isToolType(type: unknown): boolean {
  return roleOf(type) === NodeRole.Tool;
}

/** True for `memory.kv`. */
export function isMemoryType(type: unknown): boolean {
  return roleOf(type) === NodeRole.Memory;
}

/** True for the output types (`response.chat`, `response.end`). */
export function isOutputType(type: unknown): boolean {
  return roleOf(type) === NodeRole.Output;
}

/**
 * True for a capability: a model, a tool or a memory, which must be connected to the agent core
 * (otherwise `CAPABILITY_NOT_CONNECTED`).
 */
export function isCapabilityType(type: unknown): boolean {
  const role = roleOf(type);
  return role === NodeRole.Model || role === NodeRole.Tool || role === NodeRole.Memory;
}
