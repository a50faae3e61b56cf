import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { nodeRedOnlyDiagnostics } from '../../src/flows/nodeRedOnly.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { checkAgentWiring } from '../../src/nodeRed/agentWiring.js';
import { nodeRedDiagnostics } from '../../src/server/nodeRed/nodeRedFlowStore.js';
import { METADATA_ENV } from '../../src/flows/nodeRed/flowMetadata.js';
import { nodeRedToRedflow } from '../../src/flows/nodeRed/fromNodeRed.js';
import { parseNodeRedFlows, type NodeRedFlowNode } from '../../src/flows/nodeRed/nodeRedFlows.js';
import { redflowToNodeRed } from '../../src/flows/nodeRed/toNodeRed.js';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { ROOT } from './nodeRedProcess.js';

const example = (name: string) => JSON.parse(readFileSync(path.join(ROOT, 'examples', name, 'flow.json'), 'utf8')) as FlowDefinition;
const nodeRedExample = () => parseNodeRedFlows(JSON.parse(readFileSync(path.join(ROOT, 'node-red/examples/order-status.json'), 'utf8')));
const byId = (flows: readonly NodeRedFlowNode[]) => new Map(flows.map((node) => [node.id, node as NodeRedNodeConfig]));
const caught = (run: () => unknown): RedflowError => {
  try {
    run();
  } catch (error) {
    if (error instanceof RedflowError) return error;
    throw error;
  }
  throw new Error('expected a RedflowError');
};

describe('a Redflow flow file in Node-RED', () => {
  it('is a tab with one node of its Redflow type per node, the agent\'s edges on the outputs of their kind, and the rest in the tab\'s metadata', () => {
    const { flows, tab } = redflowToNodeRed(example('order-status'));
    expect(tab).toBe('order-status');
    const node = (id: string) => flows.find((candidate) => candidate.id === id);
    expect(node('order-status')).toMatchObject({ type: 'tab', label: 'Order status assistant', info: expect.stringContaining('Answers where an order is') });
    expect(node('agent')).toMatchObject({
      type: 'redflow-agent',
      z: 'order-status',
      maxIterations: 5,
      allowedTools: ['lookup_order', 'track_shipment'],
      x: 300,
      y: 124,
      wires: [['reply'], ['model'], ['lookup_order', 'track_shipment'], ['memory']],
    });
    expect(node('question')).toMatchObject({ type: 'redflow-input', wires: [['agent']] });
    expect(node('lookup_order')).toMatchObject({ type: 'redflow-tool-module', module: 'tools/lookupOrder.mjs', wires: [] });
    const env = (node('order-status')?.env as { name: string; value: string }[])[0];
    expect(env?.name).toBe(METADATA_ENV);
    expect(JSON.parse(env?.value ?? '{}')).toMatchObject({ flow: { id: 'order-status', version: 1, start: 'question' }, edges: expect.arrayContaining([{ wire: 'agent:1:model', edge: { id: 'e2' } }]) });
  });

  // Node-RED has no node for a client tool (refund-approval) or a subagent (subagents): their agents have no other tool there.
  // The examples that are flows (others are a page, or an agent written as Markdown).
  const examples = readdirSync(path.join(ROOT, 'examples')).filter((name) => existsSync(path.join(ROOT, 'examples', name, 'flow.json')));
  const runsInNodeRed = (name: string) => nodeRedDiagnostics(example(name)).length === 0;

  it.each(examples.filter((name) => !runsInNodeRed(name)))('keeps the %s example, which has a node Node-RED cannot run, and says why it cannot run there', (name) => {
    // A subagent (agent.ref) or a client tool.
    expect(nodeRedDiagnostics(example(name)).map((diagnostic) => diagnostic.code)).toContain(ErrorCode.NODE_RED_NODE_UNSUPPORTED);
  });

  it.each(examples.filter(runsInNodeRed))('runs in Node-RED as it validates: the agent of the %s example passes Node-RED\'s wiring check', (name) => {
    const doc = example(name);
    expect(validateFlow(doc).ok).toBe(true);
    const { flows } = redflowToNodeRed(doc);
    const agent = flows.find((node) => node.type === 'redflow-agent');
    const { validation } = checkAgentWiring(agent?.id ?? '', byId(flows));
    expect(validation.ok ? [] : validation.errors).toEqual([]);
  });

  it('keeps a tool.client, which Node-RED has no node for, in the metadata: it comes back, and is no tool of the agent there', () => {
    const doc = example('order-status');
    doc.nodes.push({ id: 'ask_user', type: 'tool.client', label: 'Ask the customer', config: { description: 'asks' } });
    doc.edges.push({ id: 'e7', source: 'agent', target: 'ask_user', kind: 'tool' });
    const { flows } = redflowToNodeRed(doc);
    expect(flows.some((node) => node.id === 'ask_user')).toBe(false);
    expect(flows.find((node) => node.id === 'agent')?.wires?.[2]).toEqual(['lookup_order', 'track_shipment']);
    expect(nodeRedToRedflow(flows).flow).toEqual(doc);
  });

  it('refuses a postgres connection string written in the flow (NODE_RED_SECRET_IN_FLOW), a node id another tab uses (NODE_RED_ID_CONFLICT) and duplicate ids', () => {
    const doc = example('postgres-orders');
    const postgres = doc.nodes.find((node) => node.type === 'tool.postgres');
    if (postgres?.config === undefined) throw new Error('the example has a postgres tool');
    postgres.config.connectionString = 'postgres://user:secret@db/orders';
    const secret = caught(() => redflowToNodeRed(doc));
    expect(secret.code).toBe(ErrorCode.NODE_RED_SECRET_IN_FLOW);
    expect(secret.message).not.toContain('secret@');

    const existing: NodeRedFlowNode[] = [
      { id: 'elsewhere', type: 'tab', label: 'Elsewhere' },
      { id: 'model', type: 'function', z: 'elsewhere', wires: [[]] },
    ];
    const conflict = caught(() => redflowToNodeRed(example('order-status'), { existing }));
    expect(conflict.code).toBe(ErrorCode.NODE_RED_ID_CONFLICT);
    expect(conflict.message).toContain("'model' (a function node of tab elsewhere)");

    const twice = example('graph-format');
    twice.nodes.push({ ...(twice.nodes[0] as FlowDefinition['nodes'][number]) });
    expect(caught(() => redflowToNodeRed(twice)).code).toBe(ErrorCode.DUPLICATE_NODE_ID);
    expect(caught(() => redflowToNodeRed({ nodes: 'none' } as unknown as FlowDefinition)).code).toBe(ErrorCode.FLOW_SCHEMA_MISMATCH);
  });
});

describe('a Node-RED tab as a Redflow flow', () => {
  it('has the Redflow nodes of the tab, a flow tool as tool.flow (valid, and refused outside Node-RED), and leaves Node-RED\'s own nodes out', () => {
    const { flow, tab } = nodeRedToRedflow(nodeRedExample());
    expect(tab).toBe('7f3a0c1d5e2b4a69');
    expect(flow.id).toBe(tab);
    expect(flow.nodes.map((node) => node.type).sort()).toEqual(['agent.core', 'memory.kv', 'model.llm', 'response.chat', 'tool.flow', 'tool.flow', 'trigger.input']);
    expect(flow.nodes.find((node) => node.id === 'c41e0a7f9b2d6e07')).toMatchObject({ type: 'tool.flow', config: { name: 'lookup_order', inputSchema: { required: ['orderId'] } }, position: { x: 820, y: 240 } });
    expect(flow.edges).toContainEqual({ id: 'c41e0a7f9b2d6e03:2:c41e0a7f9b2d6e07', source: 'c41e0a7f9b2d6e03', target: 'c41e0a7f9b2d6e07', kind: 'tool' });
    expect(validateFlow(flow).ok).toBe(true);
    expect(nodeRedOnlyDiagnostics(flow).map((error) => [error.code, error.nodeId])).toEqual([
      [ErrorCode.FLOW_TOOL_NODE_RED_ONLY, 'c41e0a7f9b2d6e07'],
      [ErrorCode.FLOW_TOOL_NODE_RED_ONLY, 'c41e0a7f9b2d6e0a'],
    ]);
  });

  it('saved back after an edit in Redflow changes only what the edit changed: Node-RED\'s nodes, their wires and blank properties stay', () => {
    const flows = nodeRedExample();
    const { flow, tab } = nodeRedToRedflow(flows);
    const model = flow.nodes.find((node) => node.type === 'model.llm');
    if (model?.config === undefined) throw new Error('the example has a model');
    model.config.temperature = 0.2;
    // The response node is removed in Redflow: its wire from the agent goes, and so does it.
    const reply = 'c41e0a7f9b2d6e04';
    const edited: FlowDefinition = { ...flow, nodes: flow.nodes.filter((node) => node.id !== reply), edges: flow.edges.filter((edge) => edge.target !== reply) };
    const saved = redflowToNodeRed(edited, { tab, existing: flows }).flows;
    const changed = saved.filter((node) => JSON.stringify(node) !== JSON.stringify(flows.find((old) => old.id === node.id)));
    // The example holds no tab node, and gets none: nothing the document says needs the tab's metadata.
    expect(changed.map((node) => node.id).sort()).toEqual(['c41e0a7f9b2d6e03', 'c41e0a7f9b2d6e06']);
    expect(saved.find((node) => node.id === 'c41e0a7f9b2d6e06')).toMatchObject({ temperature: 0.2, maxTokens: '', baseUrl: '' });
    expect(saved.find((node) => node.id === 'c41e0a7f9b2d6e03')?.wires?.[0]).toEqual([]);
    expect(saved.some((node) => node.id === reply)).toBe(false);
    // The debug node the response fed stays, unwired.
    expect(saved.find((node) => node.id === 'c41e0a7f9b2d6e05')).toEqual(flows.find((node) => node.id === 'c41e0a7f9b2d6e05'));
  });

  it('follows edits made in Node-RED after Redflow saved it: a renamed tab, a new wire, a moved node', () => {
    const doc = example('order-status');
    const { flows } = redflowToNodeRed(doc);
    const edited = structuredClone(flows) as unknown as Record<string, unknown>[];
    const tab = edited.find((node) => node.id === 'order-status') as unknown as { label: string };
    tab.label = 'Orders';
    const agent = edited.find((node) => node.id === 'agent') as unknown as { wires: string[][] };
    edited.push({ id: 'weather', type: 'redflow-tool-http', z: 'order-status', name: 'weather', url: 'http://127.0.0.1/{city}', x: 900, y: 264, wires: [] });
    agent.wires[2]?.push('weather');
    (edited.find((node) => node.id === 'model') as unknown as { x: number }).x = 333;
    const back = nodeRedToRedflow(edited as unknown as NodeRedFlowNode[]).flow;
    expect(back.name).toBe('Orders');
    expect(back.nodes.find((node) => node.id === 'model')?.position).toEqual({ x: 333, y: 0 });
    expect(back.nodes.find((node) => node.id === 'weather')).toEqual({ id: 'weather', type: 'tool.http', config: { name: 'weather', url: 'http://127.0.0.1/{city}' }, position: { x: 900, y: 264 } });
    expect(back.edges.slice(0, 6)).toEqual(doc.edges);
    expect(back.edges[6]).toEqual({ id: 'agent:2:weather', source: 'agent', target: 'weather', kind: 'tool' });
  });

  it('says which tab to pick when several hold Redflow nodes, takes one by label, and refuses what is not Node-RED flows', () => {
    const { flows: one } = redflowToNodeRed(example('order-status'));
    const { flows: two } = redflowToNodeRed(example('graph-format'), { existing: one });
    const ambiguous = caught(() => nodeRedToRedflow(two));
    expect(ambiguous.code).toBe(ErrorCode.NODE_RED_TAB_NOT_FOUND);
    expect(ambiguous.message).toContain('order-status ("Order status assistant")');
    expect(ambiguous.hint).toContain('--tab');
    expect(nodeRedToRedflow(two, { tab: 'Order status assistant' }).flow).toEqual(example('order-status'));
    expect(nodeRedToRedflow(two, { tab: 'agent-example' }).flow).toEqual(example('graph-format'));
    expect(caught(() => nodeRedToRedflow(two, { tab: 'nope' })).code).toBe(ErrorCode.NODE_RED_TAB_NOT_FOUND);
    expect(caught(() => nodeRedToRedflow([{ id: 't', type: 'tab' }])).message).toContain('no tab of the flows holds a Redflow node');
    for (const bad of [{}, [1], [{ id: 'a' }], [{ id: 'a', type: 'x', wires: 'no' }], [{ id: 'a', type: 'x' }, { id: 'a', type: 'y' }]]) {
      expect(caught(() => parseNodeRedFlows(bad)).code).toBe(ErrorCode.NODE_RED_FLOWS_INVALID);
    }
  });
});
