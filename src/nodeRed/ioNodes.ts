import type { RunOutcome } from '../contracts/schema-types.js';
import type { NodeRedApi, NodeRedMessage, NodeRedNode, NodeRedNodeConfig } from './nodeRedApi.js';
import { NodeRedType } from '../flows/nodeRed/nodeRedTypes.js';

/**
 * Registers the nodes at the agent's edges: `redflow-input` (the run's input; the agent checks it
 * against the input node's `inputSchema`), `redflow-response` (the answer, as `format` says) and
 * `redflow-end` (where an answer that goes nowhere ends).
 *
 * @example
 * ```ts
 * module.exports = async (RED) => (await import('redflow/node-red')).registerIoNodes(RED);
 * ```
 */
export function registerIoNodes(RED: NodeRedApi): void {
  RED.nodes.registerType(NodeRedType.Input, function (this: NodeRedNode, config: NodeRedNodeConfig) {
    RED.nodes.createNode(this, config);
    this.on('input', (msg, send, done) => {
      send(msg);
      done();
    });
  });
  RED.nodes.registerType(NodeRedType.Response, function (this: NodeRedNode, config: NodeRedNodeConfig) {
    RED.nodes.createNode(this, config);
    const format = typeof config.format === 'string' && config.format !== '' ? config.format : 'text';
    this.on('input', (msg, send, done) => {
      send(formatAnswer(msg, format));
      done();
    });
  });
  RED.nodes.registerType(NodeRedType.End, function (this: NodeRedNode, config: NodeRedNodeConfig) {
    RED.nodes.createNode(this, config);
    this.on('input', (_msg, _send, done) => done());
  });
}

/**
 * The agent's output as a response: `text` and `markdown` put the answer in `msg.payload` (markdown
 * also sets `msg.contentType`), `json` the whole outcome. A message that carries no outcome is
 * passed on as it is.
 *
 * @example
 * ```ts
 * formatAnswer({ payload: 'x', redflow: { outcome } }, 'json').payload // the outcome object
 * ```
 */
export function formatAnswer(msg: NodeRedMessage, format: string): NodeRedMessage {
  const outcome = (msg.redflow as { outcome?: RunOutcome } | undefined)?.outcome;
  if (outcome === undefined) return msg;
  if (format === 'json') msg.payload = outcome;
  else {
    msg.payload = outcome.answer ?? '';
    if (format === 'markdown') msg.contentType = 'text/markdown';
  }
  return msg;
}
