/**
 * The palette: every node type, grouped by role, with the config a new node starts with. Each
 * default is valid against its schema (a test checks it), so a node dropped on the canvas only
 * needs what is truly the user's to say.
 */
import { NODE_TYPES, NodeRole, NodeType, NodeTypeRole, type NodeType as NodeTypeName } from '../../flows/nodeTypes.js';

/** A palette group: the node types of one role (the roles edges are checked by). */
export interface PaletteGroup {
  readonly role: NodeRole;
  readonly title: string;
  readonly types: readonly NodeTypeName[];
}

/** Each role's heading in the palette: input, agent core, model, tools, memory, output. */
const ROLE_TITLE: { readonly [R in NodeRole]: string } = {
  [NodeRole.Input]: 'Input',
  [NodeRole.Core]: 'Agent core',
  [NodeRole.Model]: 'Model',
  [NodeRole.Tool]: 'Tools',
  [NodeRole.Memory]: 'Memory',
  [NodeRole.Output]: 'Output',
};

/**
 * The palette, in the order a flow reads (input, core, model, tools, memory, output): derived from
 * the flow's own node roles, so a new node type appears in its group by itself.
 */
export const PALETTE: readonly PaletteGroup[] = Object.values(NodeRole).map((role) => ({
  role,
  title: ROLE_TITLE[role],
  types: NODE_TYPES.filter((type) => NodeTypeRole[type] === role),
}));

/** A one-line description of each node type, shown in the palette. */
export const NODE_TYPE_SUMMARY: { readonly [T in NodeTypeName]: string } = {
  [NodeType.TriggerInput]: 'the run’s input',
  [NodeType.AgentCore]: 'the ReAct orchestrator',
  [NodeType.ModelLlm]: 'an LLM, or scripted answers',
  [NodeType.ToolHttp]: 'calls an HTTP API',
  [NodeType.ToolModule]: 'a JS/TS module tool',
  [NodeType.ToolPostgres]: 'one SQL query',
  [NodeType.ToolMcp]: 'an MCP server’s tools',
  [NodeType.ToolClient]: 'run by the client',
  [NodeType.ToolFlow]: 'a Node-RED flow (in Node-RED only)',
  [NodeType.AgentRef]: 'a subagent: another flow',
  [NodeType.AgentA2a]: 'a remote A2A agent',
  [NodeType.MemoryKv]: 'conversation memory',
  [NodeType.ResponseChat]: 'sends the answer',
  [NodeType.ResponseEnd]: 'ends the flow',
};

/**
 * The config of a new node of each type. The agent core leaves `allowedTools` out: it then
 * allows every tool connected to it (`normalizeAgentConfig`), until the Tools tab lists some.
 */
export function defaultConfig(type: NodeTypeName): Record<string, unknown> {
  switch (type) {
    case NodeType.TriggerInput:
      return {};
    case NodeType.AgentCore:
      return { strategy: 'react', maxIterations: 5, debug: false };
    case NodeType.ModelLlm:
      return { provider: 'scripted', answers: [{ action: 'final', message: 'Hello from a scripted model.', confidence: 1 }] };
    case NodeType.ToolHttp:
      return {
        method: 'GET',
        url: 'https://api.example.com/search?q={query}',
        inputSchema: { type: 'object', required: ['query'], properties: { query: { type: 'string' } } },
      };
    case NodeType.ToolModule:
      return { module: 'tools/myTool.ts' };
    case NodeType.ToolPostgres:
      return {
        query: 'SELECT * FROM orders WHERE id = :id',
        inputSchema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        readOnly: true,
      };
    case NodeType.ToolMcp:
      return { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'], prefix: 'fs_' };
    case NodeType.ToolClient:
      return {
        description: 'Asks the person using the app',
        inputSchema: { type: 'object', required: ['question'], properties: { question: { type: 'string' } } },
      };
    case NodeType.ToolFlow:
      return {
        description: 'Runs the Node-RED flow wired after this node',
        inputSchema: { type: 'object', required: ['query'], properties: { query: { type: 'string' } } },
      };
    case NodeType.AgentRef:
      return { flow: 'subagent/flow.json', description: 'Does a task and answers' };
    case NodeType.AgentA2a:
      return { url: 'http://127.0.0.1:8080/a2a/refund-desk/' };
    case NodeType.MemoryKv:
      return { store: 'memory', maxTurns: 20 };
    case NodeType.ResponseChat:
      return { format: 'text' };
    case NodeType.ResponseEnd:
      return {};
  }
}

/** The prefix of a new node's id (node ids are also tool names, so only `[A-Za-z0-9_-]`). */
export const ID_PREFIX: { readonly [T in NodeTypeName]: string } = {
  [NodeType.TriggerInput]: 'input',
  [NodeType.AgentCore]: 'agent',
  [NodeType.ModelLlm]: 'model',
  [NodeType.ToolHttp]: 'http_tool',
  [NodeType.ToolModule]: 'module_tool',
  [NodeType.ToolPostgres]: 'sql_tool',
  [NodeType.ToolMcp]: 'mcp_server',
  [NodeType.ToolClient]: 'client_tool',
  [NodeType.ToolFlow]: 'flow_tool',
  [NodeType.AgentRef]: 'subagent',
  [NodeType.AgentA2a]: 'a2a_agent',
  [NodeType.MemoryKv]: 'memory',
  [NodeType.ResponseChat]: 'reply',
  [NodeType.ResponseEnd]: 'end',
};

/** A node id for a new node of `type` that no node in `taken` has: `model`, then `model_2`, … */
export function newNodeId(type: NodeTypeName, taken: ReadonlySet<string>): string {
  const prefix = ID_PREFIX[type];
  if (!taken.has(prefix)) return prefix;
  for (let n = 2; ; n++) {
    const id = `${prefix}_${n}`;
    if (!taken.has(id)) return id;
  }
}

/** The MIME type of a palette drag (HTML5 drag and drop). */
export const PALETTE_DRAG_TYPE = 'application/x-redflow-node-type';
