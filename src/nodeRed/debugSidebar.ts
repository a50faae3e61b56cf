import type { AgentEvent } from '../events/eventTypes.js';
import type { NodeRedApi, NodeRedNode } from './nodeRedApi.js';

/** Longest text the sidebar gets for one event (Node-RED's own debug default is 1000). */
const MAX_DEBUG_LENGTH = 10_000;

/**
 * Shows one event of a run in Node-RED's debug sidebar, as a debug node would show a message:
 * under the agent's name, with the event type and iteration as the topic. Clicking the entry
 * finds the agent in the editor.
 *
 * @example
 * ```ts
 * if (agent.debug) showInDebugSidebar(RED, node, event);
 * ```
 */
export function showInDebugSidebar(RED: NodeRedApi, node: NodeRedNode, event: AgentEvent): void {
  if (RED.comms === undefined) return;
  const entry = RED.util.encodeObject(
    {
      id: node.id,
      ...(node.z !== undefined && { z: node.z }),
      ...(node._alias !== undefined && { _alias: node._alias }),
      ...(node._flow?.path !== undefined && { path: node._flow.path }),
      ...(node.name !== undefined && node.name !== '' && { name: node.name }),
      topic: `${event.type} #${event.iteration}`,
      msg: event,
    },
    { maxLength: MAX_DEBUG_LENGTH },
  );
  RED.comms.publish('debug', entry);
}
