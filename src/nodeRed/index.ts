/**
 * Redflow in Node-RED: the agent core, its model, tools and memory as Node-RED nodes, running the
 * statechart, validation, event log, replay and resume of embedded runs, reached through Node-RED
 * messages. The package `node-red-contrib-redflow` (the `node-red/` folder of this repository)
 * registers these nodes; this module holds their runtime.
 *
 * @example
 * ```js
 * // a Node-RED node module (CommonJS)
 * module.exports = async function (RED) {
 *   const { registerRedflowNodes } = await import('redflow/node-red');
 *   registerRedflowNodes(RED);
 * };
 * ```
 */
import { registerAgentNode } from './agentNode.js';
import { registerCapabilityNodes } from './capabilityNodes.js';
import { registerIoNodes } from './ioNodes.js';
import type { NodeRedApi } from './nodeRedApi.js';

export { registerAgentNode } from './agentNode.js';
export { registerCapabilityNodes, CAPABILITY_CREDENTIALS } from './capabilityNodes.js';
export { registerIoNodes, formatAnswer } from './ioNodes.js';
export { startAgentHost, CLOSE_GRACE_MS } from './agentHost.js';
export type { AgentHost, AgentDescription, RedflowNodeRedSettings } from './agentHostTypes.js';
export { checkAgentWiring, deployedConfigs, describeDiagnostic } from './agentWiring.js';
export type { AgentWiring } from './agentWiring.js';
export { agentFlowDocument, redflowNode } from './flowDocument.js';
export type { AgentGraph } from './flowDocument.js';
export { NodeRedType, NODE_RED_TYPES, AGENT_OUTPUTS, FieldKind, readField, isMappedType } from '../flows/nodeRed/nodeRedTypes.js';
export { redflowToNodeRed, defaultTabId, NODE_RED_TYPE_OF } from '../flows/nodeRed/toNodeRed.js';
export type { ToNodeRedOptions } from '../flows/nodeRed/toNodeRed.js';
export { nodeRedToRedflow } from '../flows/nodeRed/fromNodeRed.js';
export type { ConvertedTab } from '../flows/nodeRed/fromNodeRed.js';
export { parseNodeRedFlows, pickTab, redflowTabs } from '../flows/nodeRed/nodeRedFlows.js';
export type { NodeRedFlowNode, NodeRedTab, RedflowTab } from '../flows/nodeRed/nodeRedFlows.js';
export { METADATA_ENV } from '../flows/nodeRed/flowMetadata.js';
export type { FlowMetadata } from '../flows/nodeRed/flowMetadata.js';
export type { NodeRedTypeInfo } from '../flows/nodeRed/nodeRedTypes.js';
export { createNodeRedTransport, acceptRequest, replyError } from './nodeRedTransport.js';
export type { NodeRedTransport, NodeRedHandlerContext } from './nodeRedTransport.js';
export { flowToolHandler, finishFlowToolCall, DEFAULT_FLOW_TOOL_TIMEOUT_MS } from './flowTool.js';
export type { NodeRedApi, NodeRedNode, NodeRedNodeConfig, NodeRedMessage } from './nodeRedApi.js';

/**
 * Registers every Redflow node type with Node-RED: the agent, its capabilities and its edges. The
 * promise settles once telemetry is on, when the environment asks for it (see `registerAgentNode`).
 *
 * @example
 * ```ts
 * await registerRedflowNodes(RED);
 * ```
 */
export function registerRedflowNodes(RED: NodeRedApi): Promise<void> {
  const telemetry = registerAgentNode(RED);
  registerCapabilityNodes(RED);
  registerIoNodes(RED);
  return telemetry;
}
