import type { AgentCoreReactConfig, FlowDefinition, FlowNode } from '../contracts/schema-types.js';
import type { FlowDiagnostic } from './diagnostics.js';

// What validateFlow answers: a flow resolved into the parts a run needs, or what is wrong with it.
// Types only: nothing here is loaded at run time.

/** A tool connected to the agent core. */
export interface ResolvedTool {
  readonly node: FlowNode;
  /** The name the model calls it by: `config.name`, else the node id. */
  readonly name: string;
  /**
   * True when the tool has an input schema: `config.inputSchema` for `tool.http` and
   * `tool.postgres` (where it is required); always true for `tool.module`, whose module must
   * export one (checked when the module is loaded), and for `agent.ref` (`{ task }`).
   */
  readonly hasInputSchema: boolean;
}

/** A valid flow, resolved into the parts a run needs. */
export interface ResolvedFlow {
  /** The flow as given (not copied). */
  readonly definition: FlowDefinition;
  /** The agent core node and its normalised, validated config. */
  readonly agent: { readonly node: FlowNode; readonly config: AgentCoreReactConfig };
  /** The model connected to the agent core. */
  readonly model: FlowNode;
  /** The model.llm node the agent core verifies its final answers with (`verification.model`), when it names one. */
  readonly verifier?: FlowNode;
  /** Every tool connected to the agent core, in node order (the model may call those in `allowedTools`). */
  readonly tools: readonly ResolvedTool[];
  /** The memory connected to the agent core, if any. */
  readonly memory?: FlowNode;
  /** The trigger that starts a run: the `start` node, else the first trigger connected to the agent core. */
  readonly trigger?: FlowNode;
  /** The outputs connected from the agent core, in node order. */
  readonly outputs: readonly FlowNode[];
}

/**
 * The result of {@link validateFlow}: every error found (or the resolved flow), and the warnings.
 *
 * @example
 * ```ts
 * const validation: FlowValidation = validateFlow(JSON.parse(text));
 * if (!validation.ok) for (const error of validation.errors) console.error(error.code, error.message);
 * ```
 */
export type FlowValidation =
  | { readonly ok: true; readonly flow: ResolvedFlow; readonly warnings: FlowDiagnostic[] }
  | { readonly ok: false; readonly errors: FlowDiagnostic[]; readonly warnings: FlowDiagnostic[] };
