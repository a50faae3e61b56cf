import type { FlowDiagnostic } from '../flows/diagnostics.js';
import { validateFlow, type FlowValidation } from '../flows/validateFlow.js';
import { agentFlowDocument, type AgentGraph } from './flowDocument.js';
import type { NodeRedNodeConfig } from './nodeRedApi.js';

/** An agent's wiring, checked: its flow document and the verdict of flow validation on it. */
export interface AgentWiring {
  readonly graph: AgentGraph;
  /** {@link validateFlow} on the document, with the Node-RED problems added. */
  readonly validation: FlowValidation;
}

/**
 * Checks an agent's wiring as a Redflow flow: its document is validated by `validateFlow`, so a
 * wrong wiring has the codes a wrong flow file has (`NO_MODEL`, `EDGE_KIND_MISMATCH`,
 * `MULTIPLE_MODELS`, `NODE_CONFIG_INVALID`, …). Never throws for bad configurations.
 *
 * @example
 * ```ts
 * const { validation } = checkAgentWiring(node.id, deployedConfigs(RED));
 * if (!validation.ok) node.status({ fill: 'red', shape: 'ring', text: validation.errors[0].code });
 * ```
 */
export function checkAgentWiring(agentId: string, configs: ReadonlyMap<string, NodeRedNodeConfig>): AgentWiring {
  const graph = agentFlowDocument(agentId, configs);
  const checked = validateFlow(graph.flow);
  const errors: FlowDiagnostic[] = [...graph.problems, ...(checked.ok ? [] : checked.errors)];
  const warnings: FlowDiagnostic[] = [...checked.warnings];
  const validation: FlowValidation = checked.ok && errors.length === 0 ? { ok: true, flow: checked.flow, warnings } : { ok: false, errors, warnings };
  return { graph, validation };
}

/** Collects the configurations of every deployed node, by id. */
export function deployedConfigs(eachNode: (callback: (config: NodeRedNodeConfig) => void) => void): Map<string, NodeRedNodeConfig> {
  const configs = new Map<string, NodeRedNodeConfig>();
  eachNode((config) => configs.set(config.id, config));
  return configs;
}

/**
 * A diagnostic's message with node ids replaced by the nodes' names: Node-RED's ids mean nothing
 * to the person reading the status.
 *
 * @example
 * ```ts
 * describeDiagnostic(diagnostic, graph.labels) // "agent.core 'Support agent' has no model connected"
 * ```
 */
export function describeDiagnostic(diagnostic: Pick<FlowDiagnostic, 'message'>, labels: ReadonlyMap<string, string>): string {
  let message = diagnostic.message;
  for (const [id, label] of labels) message = message.split(`'${id}'`).join(`'${label}'`);
  return message;
}
