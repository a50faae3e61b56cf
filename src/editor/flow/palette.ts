/**
 * The palette: every node type, grouped by kind, with the config a new node starts with. Each
 * default is valid against its schema (a test checks it), so a node dropped on the canvas only
 * needs what is truly the user's to say.
 */
import { NodeRole, NodeType, roleOf, type NodeType as NodeTypeName } from '../../flows/nodeTypes.js';

/** A palette group: one kind of node. */
export interface PaletteGroup {
  readonly kind: PaletteKind;
  readonly title: string;
  readonly types: readonly NodeTypeName[];
}

/** The kinds the palette groups node types by (seed 000's vocabulary). */
export const PaletteKind = {
  Input: 'input',
  AgentCore: 'agent.core',
  Model: 'model',
  Tools: 'tools',
  Memory: 'memory',
  Output: 'output',
} as const;

/** One of {@link PaletteKind}'s values. */
export type PaletteKind = (typeof PaletteKind)[keyof typeof PaletteKind];

/** The palette kind of each node role. */
export const KIND_OF_ROLE: { readonly [R in NodeRole]: PaletteKind } = {
  [NodeRole.Input]: PaletteKind.Input,
  [NodeRole.Core]: PaletteKind.AgentCore,
  [NodeRole.Model]: PaletteKind.Model,
  [NodeRole.Tool]: PaletteKind.Tools,
  [NodeRole.Memory]: PaletteKind.Memory,
  [NodeRole.Output]: PaletteKind.Output,
};

/** The palette kind of a node type, or `undefined` for a type Redflow does not know. */
export function paletteKindOf(type: string): PaletteKind | undefined {
  const role = roleOf(type);
  return role === undefined ? undefined : KIND_OF_ROLE[role];
}

/** The palette, in the order a flow reads: input, core, model, tools, memory, output. */
export const PALETTE: readonly PaletteGroup[] = [
  { kind: PaletteKind.Input, title: 'Input', types: [NodeType.TriggerInput] },
  { kind: PaletteKind.AgentCore, title: 'Agent core', types: [NodeType.AgentCore] },
  { kind: PaletteKind.Model, title: 'Model', types: [NodeType.ModelLlm] },
  { kind: PaletteKind.Tools, title: 'Tools', types: [NodeType.ToolHttp, NodeType.ToolModule, NodeType.ToolPostgres] },
  { kind: PaletteKind.Memory, title: 'Memory', types: [NodeType.MemoryKv] },
  { kind: PaletteKind.Output, title: 'Output', types: [NodeType.ResponseChat, NodeType.ResponseEnd] },
];

/** A one-line description of each node type, shown in the palette. */
export const NODE_TYPE_SUMMARY: { readonly [T in NodeTypeName]: string } = {
  [NodeType.TriggerInput]: 'the run’s input',
  [NodeType.AgentCore]: 'the ReAct orchestrator',
  [NodeType.ModelLlm]: 'an LLM, or scripted answers',
  [NodeType.ToolHttp]: 'calls an HTTP API',
  [NodeType.ToolModule]: 'a JS/TS module tool',
  [NodeType.ToolPostgres]: 'one SQL query',
  [NodeType.MemoryKv]: 'conversation memory',
  [NodeType.ResponseChat]: 'sends the answer',
  [NodeType.ResponseEnd]: 'ends the flow',
};

/**
 * The config of a new node of each type. The agent core leaves `allowedTools` out: it then
 * allows every tool connected to it (DESIGN.md), until the Tools tab lists some.
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
