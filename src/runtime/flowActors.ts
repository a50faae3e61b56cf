import type { AgentCoreReactConfig, ToolSpec } from '../contracts/schema-types.js';
import type { InputValidator } from '../contracts/schemas.js';
import type { ResolvedFlow } from '../flows/validateFlow.js';
import type { MemoryStore } from '../actors/memory.js';
import type { ModelActor } from '../actors/model.js';
import type { ToolDefinition } from '../actors/tool.js';
import { planRun } from './runPlan.js';
import { buildModel } from './buildModel.js';
import { asVerifier } from './embeddedActors.js';
import { buildTools, expandToolGroups, specsInPlanOrder, toolSpecs } from './buildTools.js';
import { buildMemoryStore } from './buildMemoryStore.js';
import type { ContextBudget } from '../machines/contextBudget.js';
import { contextBudgetFor } from './contextBudgetFor.js';
import type { SubagentHost } from './subagentTool.js';

export { readAnswersFile } from './buildModel.js';

/** Options of {@link buildFlowActors}. */
export interface FlowActorOptions {
  /** The flow file's directory: relative paths in node configs are resolved from it. */
  readonly baseDir: string;
  /** Environment for model settings and keys, and `tool.postgres` connection strings (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Use these scripted answers instead of the flow's model (e.g. to run a flow offline, with no model server). */
  readonly script?: readonly unknown[];
  /** Folders besides the flow file's own where the files it names may be (`--allow-files`). */
  readonly allowFiles?: readonly string[];
  /** The API key the run's caller brought, for the model's calls instead of the environment's (see `ModelBuildOptions.modelApiKey`). */
  readonly modelApiKey?: string | undefined;
  /** Runs the flow's subagents (`agent.ref`); see `ToolBuildOptions.subagents`. */
  readonly subagents?: SubagentHost;
}

/** The actors a flow's nodes describe, ready to serve. */
export interface FlowActors {
  readonly agent: AgentCoreReactConfig;
  readonly model: ModelActor;
  /** The agent's own verifier model (`verification.model`), with the id that names its subject. */
  readonly verifier?: { readonly model: ModelActor; readonly nodeId: string };
  /** Every connected tool this process runs; the model may call those in `agent.allowedTools`. */
  readonly tools: readonly ToolDefinition[];
  /** What the model is told about every connected tool, in node order: those above, and the client tools (`executor: "client"`). */
  readonly toolSpecs: readonly ToolSpec[];
  readonly memory?: { readonly store: MemoryStore; readonly maxTurns: number; readonly nodeId: string };
  /** Checks a run's input against the trigger's inputSchema, when it has one. */
  readonly checkInput?: InputValidator;
  /** The model's window, when its node sets `contextTokens`: requests leave out the oldest messages to fit. */
  readonly contextBudget?: ContextBudget;
  /** The model node's model name: the agent's `budget` prices and counts its calls by it. */
  readonly modelName: string;
  /**
   * Releases what the tools hold (a `tool.postgres` pool): call it once the run is over and the
   * actors are no longer served. Never rejects; safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * Builds every actor of a validated flow, for a process that hosts them all (an embedded run):
 * the flow's run plan with each of its builders, the model (`buildModel`), the tools
 * (`buildTools`: modules are imported here) and the memory store (`buildMemoryStore`). Workers
 * build only what their roles host, from the same plan. Call the result's `close()` when done with
 * it: a `tool.postgres` holds a pool.
 *
 * @example
 * ```ts
 * const { validation, baseDir } = await loadFlowFile('flow.json');
 * if (validation.ok) { const actors = await buildFlowActors(validation.flow, { baseDir }); }
 * ```
 */
export async function buildFlowActors(flow: ResolvedFlow, options: FlowActorOptions): Promise<FlowActors> {
  const plan = planRun(flow, options.baseDir);
  const model = await buildModel(plan, options);
  // The verifier is the agent's own model even when a script replaces the run's.
  const verifier = plan.verifier && { model: asVerifier(await buildModel({ model: plan.verifier, baseDir: plan.baseDir }, { ...options, script: undefined })), nodeId: plan.verifier.nodeId };
  const { tools, groups, close } = await buildTools(plan, options);
  const memory = buildMemoryStore(plan, options);
  const contextBudget = await contextBudgetFor(plan.model.config);
  return {
    agent: expandToolGroups(plan.agent, groups),
    model,
    ...(verifier && { verifier }),
    tools,
    toolSpecs: specsInPlanOrder(plan, toolSpecs(tools), undefined, groups),
    ...(memory && { memory }),
    ...(plan.checkInput && { checkInput: plan.checkInput }),
    ...(contextBudget && { contextBudget }),
    modelName: plan.model.config.model ?? '',
    close,
  };
}
