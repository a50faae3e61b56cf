import type { AgentCoreReactConfig } from '../contracts/schema-types.js';
import type { InputValidator } from '../contracts/schemas.js';
import type { ResolvedFlow } from '../flows/validateFlow.js';
import type { MemoryStore } from '../actors/memory.js';
import type { ModelActor } from '../actors/model.js';
import type { ToolDefinition } from '../actors/tool.js';
import { planRun } from './runPlan.js';
import { buildModel } from './buildModel.js';
import { buildTools } from './buildTools.js';
import { buildMemoryStore } from './buildMemoryStore.js';

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
}

/** The actors a flow's nodes describe, ready to serve. */
export interface FlowActors {
  readonly agent: AgentCoreReactConfig;
  readonly model: ModelActor;
  /** Every connected tool; the model may call those in `agent.allowedTools`. */
  readonly tools: readonly ToolDefinition[];
  readonly memory?: { readonly store: MemoryStore; readonly maxTurns: number; readonly nodeId: string };
  /** Checks a run's input against the trigger's inputSchema, when it has one. */
  readonly checkInput?: InputValidator;
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
  const { tools, close } = await buildTools(plan, options);
  const memory = buildMemoryStore(plan, options);
  return {
    agent: plan.agent,
    model,
    tools,
    ...(memory && { memory }),
    ...(plan.checkInput && { checkInput: plan.checkInput }),
    close,
  };
}
