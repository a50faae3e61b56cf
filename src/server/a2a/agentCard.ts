/**
 * A flow's A2A agent card: its name, description and one skill from the flow, the JSON-RPC
 * interface at `/a2a/<flowId>`, and the bearer token when the server has one.
 */
import { A2A_PROTOCOL_VERSION, type AgentCard } from '@a2a-js/sdk';
import type { FlowDefinition } from '../../contracts/schema-types.js';
import { redflowVersion } from '../../version.js';

/** The path under which each flow is an A2A agent: `/a2a/<flowId>`. */
export const A2A_PATH = '/a2a';

/** What a flow's card is made from. */
export interface AgentCardSource {
  readonly flowId: string;
  readonly flow: FlowDefinition;
  /** The agent's JSON-RPC URL, `http://<host>/a2a/<flowId>`. */
  readonly url: string;
  /** True when calls need `Authorization: Bearer <token>`. */
  readonly bearer: boolean;
}

/**
 * The agent card of a flow served over A2A.
 *
 * @example
 * ```ts
 * const card = agentCardOf({ flowId: 'support', flow, url: 'http://127.0.0.1:4800/a2a/support', bearer: true });
 * card.supportedInterfaces[0]?.url; // 'http://127.0.0.1:4800/a2a/support'
 * ```
 */
export function agentCardOf(source: AgentCardSource): AgentCard {
  const { flow, flowId } = source;
  const name = flow.name ?? flow.id ?? flowId;
  const description = flow.description ?? `The Redflow flow ${flowId}: a ReAct agent that takes a task as text and answers it.`;
  const tools = flow.nodes.filter((node) => node.type.startsWith('tool.') || node.type.startsWith('agent.') && node.type !== 'agent.core').map((node) => node.id);
  const modes = ['text/plain', 'application/json'];
  return {
    name,
    description,
    supportedInterfaces: [{ url: source.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: undefined,
    version: String(flow.version ?? redflowVersion),
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: source.bearer ? { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: "the token `redflow serve` was started with", scheme: 'bearer', bearerFormat: '' } } } } : {},
    securityRequirements: source.bearer ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: modes,
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: flowId,
        name,
        description,
        tags: ['redflow', ...tools],
        examples: [],
        inputModes: modes,
        outputModes: ['text/plain'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
