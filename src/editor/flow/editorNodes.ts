/**
 * The editor's node and edge types: one React Flow node type per flow node type (a typed union),
 * each carrying the node's `config` as it will be saved, and the handle ids of each kind of node.
 */
import type { Edge, Node } from '@xyflow/react';
import type {
  AgentCoreReactConfig,
  MemoryKvConfig,
  ModelLlmConfig,
  ResponseChatConfig,
  ResponseEndConfig,
  ToolHttpConfig,
  ToolModuleConfig,
  ToolPostgresConfig,
  ToolMcpConfig,
  ToolClientConfig,
  ToolFlowConfig,
  AgentRefConfig,
  AgentA2AConfig,
  TriggerInputConfig,
} from '../../contracts/schema-types.js';
import { EdgeKind, NodeRole, type NodeType } from '../../flows/nodeTypes.js';

/** What every editor node carries: the flow node's label and config (a config being edited may be incomplete). */
export type FlowNodeData<C> = {
  label?: string;
  config: Partial<C>;
};

/** A `trigger.input` node: where the run's input enters the flow. */
export type TriggerInputNode = Node<FlowNodeData<TriggerInputConfig>, typeof NodeType.TriggerInput>;
/** The `agent.core` node: the ReAct orchestrator. */
export type AgentCoreNode = Node<FlowNodeData<AgentCoreReactConfig>, typeof NodeType.AgentCore>;
/** A `model.llm` node: the LLM (or scripted answers) the core calls. */
export type ModelLlmNode = Node<FlowNodeData<ModelLlmConfig>, typeof NodeType.ModelLlm>;
/** A `memory.kv` node: the core's conversation memory. */
export type MemoryKvNode = Node<FlowNodeData<MemoryKvConfig>, typeof NodeType.MemoryKv>;
/** A `tool.http` node: a tool that calls an HTTP API. */
export type ToolHttpNode = Node<FlowNodeData<ToolHttpConfig>, typeof NodeType.ToolHttp>;
/** A `tool.module` node: a tool implemented by a JS/TS module (which also exports its input schema). */
export type ToolModuleNode = Node<FlowNodeData<ToolModuleConfig>, typeof NodeType.ToolModule>;
/** A `tool.postgres` node: a tool that runs one SQL query. */
export type ToolPostgresNode = Node<FlowNodeData<ToolPostgresConfig>, typeof NodeType.ToolPostgres>;
/** A `tool.mcp` node: an MCP server whose tools become the agent's. */
export type ToolMcpNode = Node<FlowNodeData<ToolMcpConfig>, typeof NodeType.ToolMcp>;
export type ToolClientNode = Node<FlowNodeData<ToolClientConfig>, typeof NodeType.ToolClient>;
/** A `tool.flow` node: a tool whose body is a Node-RED flow (it runs in Node-RED only). */
export type ToolFlowNode = Node<FlowNodeData<ToolFlowConfig>, typeof NodeType.ToolFlow>;
/** An `agent.ref` node: a subagent, another flow file called like a tool. */
export type AgentRefNode = Node<FlowNodeData<AgentRefConfig>, typeof NodeType.AgentRef>;
export type AgentA2aNode = Node<FlowNodeData<AgentA2AConfig>, typeof NodeType.AgentA2a>;
/** A `response.chat` node: sends the answer (as text, markdown or JSON). */
export type ResponseChatNode = Node<FlowNodeData<ResponseChatConfig>, typeof NodeType.ResponseChat>;
/** A `response.end` node: ends the flow. */
export type ResponseEndNode = Node<FlowNodeData<ResponseEndConfig>, typeof NodeType.ResponseEnd>;

/** A node whose type Redflow does not know (kept as it is, so a broken flow can be opened and fixed). */
export type UnknownTypeNode = Node<FlowNodeData<Record<string, unknown>> & { flowType: string }, typeof UNKNOWN_NODE_TYPE>;

/** The React Flow type of {@link UnknownTypeNode}. */
export const UNKNOWN_NODE_TYPE = 'unknown';

/** Any tool node; they share one node component and one palette group. */
export type ToolNode = ToolHttpNode | ToolModuleNode | ToolPostgresNode | ToolMcpNode | ToolClientNode | ToolFlowNode | AgentRefNode | AgentA2aNode;
/** Any output node; they share one node component. */
export type ResponseNode = ResponseChatNode | ResponseEndNode;

/** Every node the editor shows. */
export type RedflowNode =
  | TriggerInputNode
  | AgentCoreNode
  | ModelLlmNode
  | MemoryKvNode
  | ToolNode
  | ResponseNode
  | UnknownTypeNode;

/** An edge, with the kind the edge rules give it. */
export type RedflowEdge = Edge<{ kind?: EdgeKind }>;

/** The flow node type of an editor node (the original type for an unknown one). */
export function flowTypeOf(node: RedflowNode): string {
  return node.type === UNKNOWN_NODE_TYPE ? node.data.flowType : node.type;
}

/** The id of every node's one target handle. */
export const TARGET_HANDLE = 'in';

/**
 * The source handles of each role, named by the kind of edge that leaves them (so a handle's id is
 * the edge kind passed to the edge rules). Models, tools and outputs only receive.
 */
export const SOURCE_HANDLES: { readonly [R in NodeRole]: readonly EdgeKind[] } = {
  [NodeRole.Input]: [EdgeKind.Data],
  [NodeRole.Core]: [EdgeKind.Model, EdgeKind.Tool, EdgeKind.Memory, EdgeKind.Data],
  [NodeRole.Model]: [],
  [NodeRole.Tool]: [],
  [NodeRole.Memory]: [EdgeKind.Memory],
  [NodeRole.Output]: [],
};

/** The flow node types, as the editor's React Flow node types. */
export type RedflowNodeType = NodeType;
