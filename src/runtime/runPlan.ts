import type {
  AgentCoreReactConfig,
  AgentRefConfig,
  AgentA2AConfig,
  MemoryKvConfig,
  ModelLlmConfig,
  ToolHttpConfig,
  ToolModuleConfig,
  ToolPostgresConfig,
  ToolMcpConfig,
  ToolClientConfig,
  ToolFlowConfig,
  TriggerInputConfig,
} from '../contracts/schema-types.js';
import { compileUserSchema, type InputValidator } from '../contracts/schemas.js';
import { NodeType } from '../flows/nodeTypes.js';
import type { ResolvedFlow } from '../flows/validateFlow.js';

/** The `maxTurns` of a `memory.kv` node that does not set it. */
export const DEFAULT_MEMORY_MAX_TURNS = 20;

/** A tool of the plan: its name for the model, its node, and the node's config as the builders take it. */
export type PlannedTool =
  | { readonly name: string; readonly nodeId: string; readonly type: typeof NodeType.ToolHttp; readonly config: ToolHttpConfig }
  | { readonly name: string; readonly nodeId: string; readonly type: typeof NodeType.ToolModule; readonly config: ToolModuleConfig }
  | { readonly name: string; readonly nodeId: string; readonly type: typeof NodeType.ToolPostgres; readonly config: ToolPostgresConfig }
  | { readonly name: string; readonly nodeId: string; readonly type: typeof NodeType.ToolMcp; readonly config: ToolMcpConfig }
  | { readonly name: string; readonly nodeId: string; readonly type: typeof NodeType.ToolClient; readonly config: ToolClientConfig }
  | { readonly name: string; readonly nodeId: string; readonly type: typeof NodeType.ToolFlow; readonly config: ToolFlowConfig }
  | { readonly name: string; readonly nodeId: string; readonly type: typeof NodeType.AgentRef; readonly config: AgentRefConfig }
  | { readonly name: string; readonly nodeId: string; readonly type: typeof NodeType.AgentA2a; readonly config: AgentA2AConfig };

/**
 * What a validated flow asks to run, as settings only: nothing is built, imported or opened yet.
 * Each mode and role builds from it just what it hosts (`buildModel`, `buildTools`,
 * `buildMemoryStore`, `allowedToolSpecs`): an embedded run builds everything, a core worker no
 * model and no memory store, a model worker no tools, a tool worker no model.
 */
export interface RunPlan {
  /** The agent core's validated config. */
  readonly agent: AgentCoreReactConfig;
  /** The flow file's folder: relative paths in node configs (modules, answer files, memory) start here. */
  readonly baseDir: string;
  /** The model node; its id names the model's subject. */
  readonly model: { readonly nodeId: string; readonly config: ModelLlmConfig };
  /**
   * The model that verifies the agent's final answers, when the agent names one of its own
   * (`verification.model`): a model.llm node, or inline settings (named `<agent id>-verifier`).
   * Its id names its subject.
   */
  readonly verifier?: { readonly nodeId: string; readonly config: ModelLlmConfig };
  /** Every tool connected to the agent core, in node order; the model may call those in `agent.allowedTools`. */
  readonly tools: readonly PlannedTool[];
  /** The memory node, when the flow has one; its id names the memory's subjects. */
  readonly memory?: { readonly nodeId: string; readonly maxTurns: number; readonly config: MemoryKvConfig };
  /** Checks a run's input against the trigger's inputSchema, when it has one. */
  readonly checkInput?: InputValidator;
}

/**
 * Turns a validated flow into its {@link RunPlan}.
 *
 * @example
 * ```ts
 * const { flow, baseDir } = await loadValidFlow('flow.json');
 * const plan = planRun(flow, baseDir);
 * const model = await buildModel(plan);
 * ```
 */
export function planRun(flow: ResolvedFlow, baseDir: string): RunPlan {
  const tools: PlannedTool[] = [];
  for (const tool of flow.tools) {
    const planned = { name: tool.name, nodeId: tool.node.id, config: tool.node.config ?? {} };
    // Validation has checked each config against its node type's schema.
    if (tool.node.type === NodeType.ToolHttp) tools.push({ ...planned, type: NodeType.ToolHttp, config: planned.config as unknown as ToolHttpConfig });
    else if (tool.node.type === NodeType.ToolModule) tools.push({ ...planned, type: NodeType.ToolModule, config: planned.config as unknown as ToolModuleConfig });
    else if (tool.node.type === NodeType.ToolPostgres) tools.push({ ...planned, type: NodeType.ToolPostgres, config: planned.config as unknown as ToolPostgresConfig });
    else if (tool.node.type === NodeType.ToolMcp) tools.push({ ...planned, type: NodeType.ToolMcp, config: planned.config as unknown as ToolMcpConfig });
    else if (tool.node.type === NodeType.ToolClient) tools.push({ ...planned, type: NodeType.ToolClient, config: planned.config as unknown as ToolClientConfig });
    else if (tool.node.type === NodeType.ToolFlow) tools.push({ ...planned, type: NodeType.ToolFlow, config: planned.config as unknown as ToolFlowConfig });
    else if (tool.node.type === NodeType.AgentRef) tools.push({ ...planned, type: NodeType.AgentRef, config: planned.config as unknown as AgentRefConfig });
    else if (tool.node.type === NodeType.AgentA2a) tools.push({ ...planned, type: NodeType.AgentA2a, config: planned.config as unknown as AgentA2AConfig });
  }
  const memoryConfig = flow.memory && ((flow.memory.config ?? {}) as MemoryKvConfig);
  const inputSchema = (flow.trigger?.config as TriggerInputConfig | undefined)?.inputSchema;
  const verifier = verifierOf(flow);
  return {
    agent: flow.agent.config,
    baseDir,
    model: { nodeId: flow.model.id, config: (flow.model.config ?? {}) as ModelLlmConfig },
    ...(verifier !== undefined && { verifier }),
    tools,
    ...(flow.memory &&
      memoryConfig && {
        memory: { nodeId: flow.memory.id, maxTurns: memoryConfig.maxTurns ?? DEFAULT_MEMORY_MAX_TURNS, config: memoryConfig },
      }),
    ...(inputSchema && { checkInput: compileUserSchema(inputSchema) }),
  };
}

/** The plan's verifier model: the node the agent names, or its inline settings. */
function verifierOf(flow: ResolvedFlow): RunPlan['verifier'] {
  const { verification } = flow.agent.config;
  if (typeof verification !== 'object' || verification.model === undefined) return undefined;
  if (typeof verification.model === 'object') return { nodeId: `${flow.agent.node.id}-verifier`, config: verification.model };
  // Validation has checked that the node exists and is a model.llm.
  return flow.verifier === undefined ? undefined : { nodeId: flow.verifier.id, config: (flow.verifier.config ?? {}) as ModelLlmConfig };
}
