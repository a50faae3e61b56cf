import type { FlowDefinition, FlowEdge, FlowNode } from '../contracts/schema-types.js';
import { ErrorCode } from '../errors.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from '../flows/diagnostics.js';
import { EdgeKind } from '../flows/nodeTypes.js';
import { verifierNodeId } from '../flows/agentConfig.js';
import type { NodeRedNodeConfig } from './nodeRedApi.js';
import { AGENT_OUTPUTS, NODE_RED_TYPES, NodeRedType, isMappedType, readField } from '../flows/nodeRed/nodeRedTypes.js';

/** Nodes whose wires into an agent pass it a message, not a capability. */
const CHAINING_TYPES: ReadonlySet<string> = new Set([NodeRedType.Agent, NodeRedType.Response, NodeRedType.End]);

/** One agent's part of the deployed Node-RED flows, as a Redflow flow document. */
export interface AgentGraph {
  /** The agent, what its outputs are wired to and the Redflow input nodes wired to it, with one edge per wire. */
  readonly flow: FlowDefinition;
  /** What is wrong in Node-RED terms before the document is validated: a foreign node on a capability output. */
  readonly problems: readonly FlowDiagnostic[];
  /** A readable name for each node of the document (its name, else its type), for messages. */
  readonly labels: ReadonlyMap<string, string>;
}

/**
 * Builds the Redflow flow document of the agent `agentId` from the deployed flows' node
 * configurations: each wire from the agent's outputs is an edge of the output's kind (answer →
 * `data`, model, tools, memory), and each Redflow node wired into the agent an edge to it. Nodes
 * that are not Redflow's (an inject, an http in, a debug) are left out: in Node-RED any node may
 * bring the input or take the answer. A foreign node wired to a capability output is a problem
 * (`EDGE_NOT_ALLOWED`).
 *
 * @example
 * ```ts
 * const configs = new Map<string, NodeRedNodeConfig>();
 * RED.nodes.eachNode((config) => configs.set(config.id, config));
 * const { flow } = agentFlowDocument(agentId, configs);
 * ```
 */
export function agentFlowDocument(agentId: string, configs: ReadonlyMap<string, NodeRedNodeConfig>): AgentGraph {
  const agent = configs.get(agentId);
  if (agent === undefined) throw new Error(`no node ${agentId} in the deployed flows`);
  const nodes = new Map<string, FlowNode>();
  const edges: FlowEdge[] = [];
  const problems: FlowDiagnostic[] = [];
  const labels = new Map<string, string>();
  const add = (config: NodeRedNodeConfig): void => {
    if (nodes.has(config.id) || !isMappedType(config.type)) return;
    nodes.set(config.id, redflowNode(config));
    labels.set(config.id, labelOf(config));
  };
  add(agent);
  // The model node the agent verifies with (`verification.model`) is named, not wired.
  const verifierId = verifierNodeId(nodes.get(agentId)?.config);
  const verifier = verifierId === undefined ? undefined : configs.get(verifierId);
  if (verifier !== undefined) add(verifier);

  (agent.wires ?? []).forEach((targets, port) => {
    const output = AGENT_OUTPUTS[port];
    if (output === undefined) return;
    for (const targetId of targets) {
      const target = configs.get(targetId);
      if (target === undefined) continue;
      if (!isMappedType(target.type)) {
        if (output.kind !== EdgeKind.Data) problems.push(foreignCapability(agent, target, output.label));
        continue;
      }
      add(target);
      edges.push({ id: `${agentId}:${port}:${targetId}`, source: agentId, target: targetId, kind: output.kind });
    }
  });

  // Redflow nodes wired into the agent: the input node, and capabilities wired the wrong way round
  // (which the edge rules refuse). Another agent's answer, directly or through a response node,
  // is an input like any message: agents chain.
  for (const config of configs.values()) {
    if (config.id === agentId || !isMappedType(config.type) || CHAINING_TYPES.has(config.type)) continue;
    (config.wires ?? []).forEach((targets, port) => {
      if (!targets.includes(agentId)) return;
      add(config);
      edges.push({ id: `${config.id}:${port}:${agentId}`, source: config.id, target: agentId });
    });
  }

  const name = typeof agent.name === 'string' && agent.name !== '' ? agent.name : undefined;
  return {
    flow: { id: agentId, ...(name !== undefined && { name }), nodes: [...nodes.values()], edges },
    problems,
    labels,
  };
}

/** A Node-RED node as a Redflow node: its type's Redflow kind, its fields as config, its place. */
export function redflowNode(config: NodeRedNodeConfig): FlowNode {
  if (!isMappedType(config.type)) throw new Error(`${config.type} is not a Redflow node type`);
  const info = NODE_RED_TYPES[config.type];
  const fields: Record<string, unknown> = {};
  for (const [field, kind] of Object.entries(info.fields)) {
    const value = readField(kind, config[field]);
    if (value !== undefined) fields[field] = value;
  }
  const name = typeof config.name === 'string' && config.name !== '' ? config.name : undefined;
  if (info.nameIsConfig && name !== undefined) fields.name = name;
  const x = config.x;
  const y = config.y;
  return {
    id: config.id,
    type: info.redflowType,
    ...(!info.nameIsConfig && name !== undefined && { label: name }),
    config: fields,
    ...(typeof x === 'number' && typeof y === 'number' && { position: { x, y } }),
  };
}

/** A node's name, else its type: how messages name it. */
export function labelOf(config: Pick<NodeRedNodeConfig, 'name' | 'type'>): string {
  return typeof config.name === 'string' && config.name !== '' ? config.name : config.type;
}

function foreignCapability(agent: NodeRedNodeConfig, target: NodeRedNodeConfig, output: string): FlowDiagnostic {
  return flowDiagnostic(
    Severity.Error,
    ErrorCode.EDGE_NOT_ALLOWED,
    `the ${output} output of agent '${labelOf(agent)}' is wired to '${labelOf(target)}', a ${target.type} node: only Redflow ${output} nodes belong there`,
    {
      hint: `remove that wire; nodes that take the agent's answer are wired to its first output (answer)`,
      nodeId: target.id,
      edgeId: `${agent.id}:${target.id}`,
    },
  );
}
