import type { AgentA2AConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../errors.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from '../flows/diagnostics.js';
import { NodeType } from '../flows/nodeTypes.js';
import type { ResolvedFlow } from '../flows/validateFlow.js';

/**
 * Reads the agent card of each `agent.a2a` node of a valid flow, as a run start would: `redflow
 * validate` reports a remote agent that cannot be reached (`A2A_AGENT_UNAVAILABLE`, naming the
 * node) before any run. Nothing is sent to the agent.
 *
 * @example
 * ```ts
 * const errors = await checkA2aAgents(flow);
 * // [] when every remote agent's card was read
 * ```
 */
export async function checkA2aAgents(flow: ResolvedFlow, env: NodeJS.ProcessEnv = process.env): Promise<FlowDiagnostic[]> {
  const agents = flow.tools.filter((tool) => tool.node.type === NodeType.AgentA2a);
  if (agents.length === 0) return [];
  // Loaded only for flows that use it: it leads to the A2A SDK.
  const { connectA2aAgent } = await import('../actors/tools/a2aTool.js');
  const errors: FlowDiagnostic[] = [];
  for (const agent of agents) {
    try {
      await connectA2aAgent(agent.name, (agent.node.config ?? {}) as unknown as AgentA2AConfig, { env });
    } catch (error) {
      const info = error instanceof RedflowError ? error.toInfo() : { code: ErrorCode.A2A_AGENT_UNAVAILABLE, message: String(error) };
      errors.push(flowDiagnostic(Severity.Error, info.code, info.message, { ...(info.hint !== undefined && { hint: info.hint }), nodeId: agent.node.id }));
    }
  }
  return errors;
}
