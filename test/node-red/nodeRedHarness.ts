import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { registerRedflowNodes } from '../../src/nodeRed/index.js';
import type { NodeRedApi, NodeRedMessage, NodeRedNode, NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';

const require = createRequire(import.meta.url);

/** node-red-node-test-helper, as far as these tests use it. */
export interface TestHelper {
  settings(settings: Record<string, unknown>): Record<string, unknown>;
  load(nodes: unknown, flow: readonly Record<string, unknown>[], credentials?: Record<string, Record<string, string>>): Promise<void>;
  setFlows(flow: readonly Record<string, unknown>[], type?: string, credentials?: Record<string, Record<string, string>>): Promise<void>;
  unload(): Promise<void>;
  getNode(id: string): (NodeRedNode & NodeRedEmitter) | null;
  request(): { get(path: string): SuperTestRequest; post(path: string): SuperTestRequest };
  readonly _logSpy: { args: unknown[][] } | undefined;
}

/** What the helper's nodes add: the calls of status, error, warn and send, as events. */
export interface NodeRedEmitter {
  on(event: string, listener: (...args: never[]) => void): void;
  removeListener(event: string, listener: (...args: never[]) => void): void;
}

interface SuperTestRequest {
  send(body: unknown): SuperTestRequest;
  expect(status: number): Promise<{ body: unknown }>;
}

/** The Node-RED test helper, on the Node-RED this repository depends on. */
export const helper = require('node-red-node-test-helper') as TestHelper;

/** A node that keeps what it receives: `pending` holds each message no test has taken yet. */
interface CaptureNode {
  pending?: NodeRedMessage[];
}

/**
 * Registers every Redflow node type, as the package's node files do, and the tests' `capture`
 * node: a helper node that keeps the messages it receives until a test takes them, so a test can
 * wait for a message a run sent before the test looked (an agent resuming its runs as it starts).
 */
export const redflowNodes = (RED: NodeRedApi): void => {
  void registerRedflowNodes(RED);
  const nodes = RED.nodes as unknown as { registerType(type: string, constructor: (this: NodeRedNode & NodeRedEmitter & CaptureNode, config: NodeRedNodeConfig) => void): void; createNode(node: unknown, config: unknown): void };
  nodes.registerType('capture', function capture(config) {
    nodes.createNode(this, config);
    this.pending = [];
    this.on('input', ((msg: NodeRedMessage) => this.pending?.push(msg)) as (...args: never[]) => void);
  });
};

/** Takes the oldest message a `capture` node kept, if any. */
export function takePending(node: unknown): NodeRedMessage | undefined {
  return (node as CaptureNode).pending?.shift();
}

/** A fresh user directory, for the runs' logs and file memories. */
export async function withUserDir(): Promise<{ userDir: string; remove: () => Promise<void> }> {
  const userDir = await mkdtemp(path.join(os.tmpdir(), 'redflow-node-red-'));
  return { userDir, remove: () => rm(userDir, { recursive: true, force: true }) };
}

/** The tab a test flow's nodes are on: Node-RED takes a node without one for a config node. */
export const TAB = 'tab';

/**
 * `flow` on one tab: each node without a `z` gets the tab's, and a place (`x`, `y`): Node-RED
 * takes a node without a place for a config node.
 */
export function onTab(flow: readonly NodeRedNodeConfig[]): Record<string, unknown>[] {
  return [{ id: TAB, type: 'tab', label: 'test' }, ...flow.map((node, index) => ({ z: TAB, x: 100 + 150 * index, y: 100, ...node }))];
}

/** Loads `flow` (on one tab) with the Redflow nodes into a Node-RED whose user directory is `userDir`. */
export async function loadFlow(
  userDir: string,
  flow: readonly NodeRedNodeConfig[],
  credentials: Record<string, Record<string, string>> = {},
  redflow: Record<string, unknown> = {},
): Promise<void> {
  helper.settings({ userDir, redflow: { fsync: 'never', ...redflow } });
  await helper.load(redflowNodes, onTab(flow), credentials);
}

/** The next message a helper node receives. */
export function nextMessage(id: string, timeoutMs = 10_000): Promise<NodeRedMessage> {
  const node = helper.getNode(id);
  if (node === null) throw new Error(`no node ${id}`);
  // A capture node may have kept one that arrived before this call.
  const kept = takePending(node);
  if (kept !== undefined) return Promise.resolve(kept);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no message reached ${id} within ${timeoutMs} ms`)), timeoutMs);
    const listener = (msg: NodeRedMessage) => {
      clearTimeout(timer);
      node.removeListener('input', listener as (...args: never[]) => void);
      resolve(takePending(node) ?? msg);
    };
    node.on('input', listener as (...args: never[]) => void);
  });
}

/** Every status a node shows from now on. */
export function statuses(id: string): { readonly texts: string[]; until(match: (text: string) => boolean, timeoutMs?: number): Promise<string> } {
  const node = helper.getNode(id);
  if (node === null) throw new Error(`no node ${id}`);
  const texts: string[] = [];
  const waiters = new Set<() => void>();
  node.on('call:status', (call: { args: [{ text?: string }] }) => {
    texts.push(call.args[0]?.text ?? '');
    for (const waiter of waiters) waiter();
  });
  return {
    texts,
    until(match, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = texts.find(match);
          if (found === undefined) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no status of ${id} matched within ${timeoutMs} ms; seen: ${JSON.stringify(texts)}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
  };
}

/** The messages of every `node.error` call of a node, as they happen. */
export function errorsOf(id: string): string[] {
  const node = helper.getNode(id);
  if (node === null) throw new Error(`no node ${id}`);
  const errors: string[] = [];
  node.on('call:error', (call: { args: [unknown] }) => errors.push(String(call.args[0])));
  return errors;
}

/** Waits until `check` holds, polling. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const echoSchema = { type: 'object', required: ['text'], properties: { text: { type: 'string' } }, additionalProperties: false };

/** An agent node `agent` (its settings and wires overridden by `agent`) with a scripted model and a flow tool `echo` whose body returns its input. */
export function echoFlow(answers: readonly unknown[], agent: Partial<NodeRedNodeConfig> = {}): NodeRedNodeConfig[] {
  return [
    { id: 'agent', type: 'redflow-agent', name: 'Support agent', strategy: 'react', maxIterations: 5, wires: [['answer'], ['model'], ['echo'], []], ...agent },
    { id: 'model', type: 'redflow-model', provider: 'scripted', answers, wires: [] },
    { id: 'echo', type: 'redflow-tool-in', name: 'echo', description: 'returns its input', inputSchema: echoSchema, wires: [['echo-out']] },
    { id: 'echo-out', type: 'redflow-tool-out', wires: [] },
    { id: 'answer', type: 'helper' },
  ];
}

/** The scripted model's answers for {@link echoFlow}: call echo, then answer. */
export const toolThenFinal = [
  { action: 'tool', tool: 'echo', input: { text: 'hi' }, confidence: 0.5 },
  { action: 'final', message: 'the echo said hi', confidence: 0.9 },
];
