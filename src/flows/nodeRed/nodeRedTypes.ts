import { EdgeKind, NodeType } from '../nodeTypes.js';

/**
 * The Redflow node types for Node-RED, one per Redflow node kind (same config fields, under the
 * same names, as node properties), plus the two ends of a tool whose body is a Node-RED flow.
 */
export const NodeRedType = {
  Agent: 'redflow-agent',
  Model: 'redflow-model',
  ToolHttp: 'redflow-tool-http',
  ToolPostgres: 'redflow-tool-postgres',
  ToolModule: 'redflow-tool-module',
  /** An MCP server: its tools are the agent's. */
  ToolMcp: 'redflow-tool-mcp',
  /** A tool whose body is the Node-RED flow wired from this node to a `redflow-tool-out`. */
  ToolIn: 'redflow-tool-in',
  /** Ends a flow tool's body: its `msg.payload` is the tool's output. */
  ToolOut: 'redflow-tool-out',
  Memory: 'redflow-memory',
  Input: 'redflow-input',
  Response: 'redflow-response',
  End: 'redflow-end',
} as const;

/** One of {@link NodeRedType}'s values. */
export type NodeRedType = (typeof NodeRedType)[keyof typeof NodeRedType];

/**
 * How a property is stored in Node-RED's flows and read back for Redflow: the editor keeps an
 * empty field as `""` and may keep a number as text, so each kind says how to read it.
 */
export const FieldKind = {
  Text: 'text',
  Number: 'number',
  Boolean: 'boolean',
  /** A JSON value (an object or an array), kept as such in the flows. */
  Json: 'json',
  /** `tool.http`'s `idempotencyHeader`: a header name, or `false` for none. */
  HeaderOrFalse: 'headerOrFalse',
} as const;

/** One of {@link FieldKind}'s values. */
export type FieldKind = (typeof FieldKind)[keyof typeof FieldKind];

/** A Node-RED type that stands for a Redflow node kind, and its config fields. */
export interface NodeRedTypeInfo {
  /** The Redflow node type it stands for. */
  readonly redflowType: NodeType;
  /** Config fields, as node properties of the same names. */
  readonly fields: Readonly<Record<string, FieldKind>>;
  /** True when the node's `name` is the Redflow config's `name` (tools), not the node's label. */
  readonly nameIsConfig: boolean;
}

const toolCommon = { description: FieldKind.Text, inputSchema: FieldKind.Json } as const;

/**
 * Each Node-RED type's Redflow kind and fields: the one table both directions of a conversion
 * (Node-RED flows ⇄ Redflow flow files) and the agent's wiring check read.
 */
export const NODE_RED_TYPES: { readonly [T in Exclude<NodeRedType, typeof NodeRedType.ToolOut>]: NodeRedTypeInfo } = {
  [NodeRedType.Agent]: {
    redflowType: NodeType.AgentCore,
    nameIsConfig: false,
    fields: {
      strategy: FieldKind.Text,
      maxIterations: FieldKind.Number,
      allowedTools: FieldKind.Json,
      stopConditions: FieldKind.Json,
      debug: FieldKind.Boolean,
      instructions: FieldKind.Text,
      requiresApproval: FieldKind.Json,
      waitTimeoutMs: FieldKind.Number,
      reasoning: FieldKind.Text,
      outputSchema: FieldKind.Json,
      outputRepair: FieldKind.Boolean,
      onInvalidAnswer: FieldKind.Json,
      budget: FieldKind.Json,
      verification: FieldKind.Json,
    },
  },
  [NodeRedType.Model]: {
    redflowType: NodeType.ModelLlm,
    nameIsConfig: false,
    fields: {
      provider: FieldKind.Text,
      model: FieldKind.Text,
      baseUrl: FieldKind.Text,
      apiKeyEnv: FieldKind.Text,
      temperature: FieldKind.Number,
      maxTokens: FieldKind.Number,
      contextTokens: FieldKind.Number,
      timeoutMs: FieldKind.Number,
      maxRetries: FieldKind.Number,
      jsonMode: FieldKind.Boolean,
      decisionFormat: FieldKind.Text,
      protocol: FieldKind.Text,
      fallbacks: FieldKind.Json,
      maxResponseBytes: FieldKind.Number,
      answers: FieldKind.Json,
      answersFile: FieldKind.Text,
      verifications: FieldKind.Json,
    },
  },
  [NodeRedType.ToolHttp]: {
    redflowType: NodeType.ToolHttp,
    nameIsConfig: true,
    fields: {
      ...toolCommon,
      method: FieldKind.Text,
      url: FieldKind.Text,
      headers: FieldKind.Json,
      idempotencyHeader: FieldKind.HeaderOrFalse,
      allowedHosts: FieldKind.Json,
      timeoutMs: FieldKind.Number,
      maxResponseBytes: FieldKind.Number,
    },
  },
  [NodeRedType.ToolPostgres]: {
    redflowType: NodeType.ToolPostgres,
    nameIsConfig: true,
    fields: {
      ...toolCommon,
      query: FieldKind.Text,
      connectionStringEnv: FieldKind.Text,
      readOnly: FieldKind.Boolean,
      maxRows: FieldKind.Number,
      timeoutMs: FieldKind.Number,
    },
  },
  [NodeRedType.ToolModule]: {
    redflowType: NodeType.ToolModule,
    nameIsConfig: true,
    fields: { module: FieldKind.Text, export: FieldKind.Text, description: FieldKind.Text, timeoutMs: FieldKind.Number },
  },
  [NodeRedType.ToolMcp]: {
    redflowType: NodeType.ToolMcp,
    nameIsConfig: true,
    fields: {
      command: FieldKind.Text,
      args: FieldKind.Json,
      env: FieldKind.Json,
      cwd: FieldKind.Text,
      url: FieldKind.Text,
      headers: FieldKind.Json,
      headersFromEnv: FieldKind.Json,
      include: FieldKind.Json,
      exclude: FieldKind.Json,
      prefix: FieldKind.Text,
      timeoutMs: FieldKind.Number,
      connectTimeoutMs: FieldKind.Number,
      maxResultBytes: FieldKind.Number,
    },
  },
  [NodeRedType.ToolIn]: {
    redflowType: NodeType.ToolFlow,
    nameIsConfig: true,
    fields: { ...toolCommon, timeoutMs: FieldKind.Number },
  },
  [NodeRedType.Memory]: {
    redflowType: NodeType.MemoryKv,
    nameIsConfig: false,
    fields: { store: FieldKind.Text, path: FieldKind.Text, maxTurns: FieldKind.Number },
  },
  [NodeRedType.Input]: {
    redflowType: NodeType.TriggerInput,
    nameIsConfig: false,
    fields: { description: FieldKind.Text, inputSchema: FieldKind.Json },
  },
  [NodeRedType.Response]: { redflowType: NodeType.ResponseChat, nameIsConfig: false, fields: { format: FieldKind.Text } },
  [NodeRedType.End]: { redflowType: NodeType.ResponseEnd, nameIsConfig: false, fields: {} },
};

/** The agent's outputs, in order, and the kind of edge each one stands for. */
export const AGENT_OUTPUTS: readonly { readonly kind: EdgeKind; readonly label: string }[] = [
  { kind: EdgeKind.Data, label: 'answer' },
  { kind: EdgeKind.Model, label: 'model' },
  { kind: EdgeKind.Tool, label: 'tools' },
  { kind: EdgeKind.Memory, label: 'memory' },
];

/** True for a type this table knows (every Redflow type but `redflow-tool-out`). */
export function isMappedType(type: unknown): type is keyof typeof NODE_RED_TYPES {
  return typeof type === 'string' && Object.hasOwn(NODE_RED_TYPES, type);
}

/**
 * Reads one stored property as the Redflow config has it, or `undefined` when it is empty.
 * A value that cannot be read as its kind is kept as it is, so the flow's schema check reports it.
 *
 * @example
 * ```ts
 * readField(FieldKind.Number, '5') // 5
 * readField(FieldKind.Text, '') // undefined
 * ```
 */
export function readField(kind: FieldKind, value: unknown): unknown {
  if (value === undefined || value === null || value === '') return undefined;
  switch (kind) {
    case FieldKind.Number:
      return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case FieldKind.Boolean:
      return value === 'true' ? true : value === 'false' ? false : value;
    case FieldKind.Json:
      if (typeof value !== 'string') return value;
      try {
        return JSON.parse(value) as unknown;
      } catch {
        return value;
      }
    case FieldKind.HeaderOrFalse:
      return value === 'false' ? false : value;
    case FieldKind.Text:
      return value;
  }
}
