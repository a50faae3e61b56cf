import { ErrorCode } from '../errors.js';
import type { CredentialField, NodeRedApi, NodeRedNode, NodeRedNodeConfig } from './nodeRedApi.js';
import { NodeRedType } from '../flows/nodeRed/nodeRedTypes.js';
import { acceptRequest, replyError } from './nodeRedTransport.js';
import { finishFlowToolCall } from './flowTool.js';

/** The credentials each capability type keeps in Node-RED's credentials store. */
export const CAPABILITY_CREDENTIALS: Readonly<Record<string, Readonly<Record<string, CredentialField>>>> = {
  [NodeRedType.Model]: { apiKey: { type: 'password' } },
  [NodeRedType.ToolHttp]: { authorization: { type: 'password' } },
  [NodeRedType.ToolPostgres]: { connectionString: { type: 'password' } },
};

/** What each capability's status says while it answers. */
const WORKING: Readonly<Record<string, string>> = {
  [NodeRedType.Model]: 'thinking',
  [NodeRedType.Memory]: 'remembering',
};

/**
 * Registers the capability types: the model, the tools (`http`, `postgres`, `module`, `mcp`, and the
 * flow tool's `tool in`) and the memory. They do nothing on their own: an agent wired to them
 * sends them its requests as messages (see `nodeRedTransport.ts`); each shows the call under way
 * in its status, then how long it took or the error's code, and reports a failure to Catch nodes.
 *
 * @example
 * ```ts
 * module.exports = async (RED) => (await import('redflow/node-red')).registerCapabilityNodes(RED);
 * ```
 */
export function registerCapabilityNodes(RED: NodeRedApi): void {
  const types = [NodeRedType.Model, NodeRedType.ToolHttp, NodeRedType.ToolPostgres, NodeRedType.ToolModule, NodeRedType.ToolMcp, NodeRedType.ToolIn, NodeRedType.Memory];
  for (const type of types) {
    const credentials = CAPABILITY_CREDENTIALS[type];
    RED.nodes.registerType(
      type,
      function (this: NodeRedNode, config: NodeRedNodeConfig) {
        RED.nodes.createNode(this, config);
        answerRequests(RED, this);
      },
      credentials === undefined ? undefined : { credentials },
    );
  }
  RED.nodes.registerType(NodeRedType.ToolOut, function (this: NodeRedNode, config: NodeRedNodeConfig) {
    RED.nodes.createNode(this, config);
    this.on('input', (msg, _send, done) => {
      if (finishFlowToolCall(msg)) return done();
      done(
        new Error(
          `${ErrorCode.TRANSPORT_BAD_MESSAGE}: no tool call waits for this message: it timed out, its run ended, it was answered already, or the message lost msg.redflow on the way`,
        ),
      );
    });
  });
}

function answerRequests(RED: NodeRedApi, node: NodeRedNode): void {
  if (!wiredToAnAgent(RED, node.id)) {
    node.status({ fill: 'yellow', shape: 'ring', text: `${ErrorCode.CAPABILITY_NOT_CONNECTED}: wire an agent to it` });
  }
  const working = WORKING[node.type] ?? 'working';
  node.on('input', (msg, send, done) => {
    const answering = acceptRequest(msg, send);
    if (answering === undefined) {
      done(new Error(`${ErrorCode.TRANSPORT_BAD_MESSAGE}: ${node.type} takes requests from a Redflow agent only; wire an agent's output to it instead`));
      return;
    }
    const started = Date.now();
    node.status({ fill: 'blue', shape: 'dot', text: working });
    void answering.then((reply) => {
      const error = replyError(reply);
      if (error === undefined) {
        node.status({ fill: 'green', shape: 'dot', text: `${Date.now() - started} ms` });
        done();
      } else {
        node.status({ fill: 'red', shape: 'dot', text: error.code });
        done(new Error(`${error.code}: ${error.message}`));
      }
    });
  });
}

function wiredToAnAgent(RED: NodeRedApi, nodeId: string): boolean {
  let wired = false;
  RED.nodes.eachNode((config) => {
    if (config.type === NodeRedType.Agent && (config.wires ?? []).some((targets) => targets.includes(nodeId))) wired = true;
  });
  return wired;
}
