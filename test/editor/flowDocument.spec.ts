import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import { inferEdgeKind } from '../../src/flows/edgeRules.js';
import { UNKNOWN_NODE_TYPE } from '../../src/editor/flow/editorNodes.js';
import { emptyFlow, fromFlowDocument, newEdgeId, toFlowDocument } from '../../src/editor/flow/flowDocument.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const example = (name: string) => JSON.parse(readFileSync(path.join(root, 'examples', name, 'flow.json'), 'utf8')) as FlowDefinition;

/** A document as the editor writes it: every edge with its kind, every node with a position. */
function normalised(doc: FlowDefinition): FlowDefinition {
  const typeOf = new Map(doc.nodes.map((node) => [node.id, node.type]));
  return {
    ...doc,
    edges: doc.edges.map((edge) => ({ ...edge, kind: edge.kind ?? inferEdgeKind(typeOf.get(edge.source) ?? '', typeOf.get(edge.target) ?? '') })),
  };
}

describe('flow document ↔ React Flow nodes and edges', () => {
  it.each(['order-status', 'weather-http', 'openai-agent', 'postgres-orders'])('should give back the same document for examples/%s', (name) => {
    const doc = example(name);
    const { meta, nodes, edges } = fromFlowDocument(doc);
    const back = toFlowDocument(meta, nodes, edges);
    // Nodes the file gave no position get one (laid out by role); everything else is as it was.
    back.nodes.forEach((node, index) => {
      if (doc.nodes[index]?.position === undefined) delete node.position;
    });
    expect(back).toEqual(normalised(doc));
  });

  it('should make one typed node per flow node, with its config, and edges leaving the handle of their kind', () => {
    const { nodes, edges } = fromFlowDocument(example('order-status'));
    const agent = nodes.find((node) => node.id === 'agent');
    expect(agent?.type).toBe('agent.core');
    expect(agent?.data.config).toMatchObject({ strategy: 'react', allowedTools: ['lookup_order', 'track_shipment'] });
    const model = edges.find((edge) => edge.target === 'model');
    expect(model).toMatchObject({ source: 'agent', sourceHandle: 'model', targetHandle: 'in', data: { kind: 'model' }, className: 'edge-kind-model' });
    expect(edges.find((edge) => edge.source === 'question')).toMatchObject({ sourceHandle: 'data', data: { kind: 'data' } });
    expect(edges.find((edge) => edge.target === 'lookup_order')).toMatchObject({ sourceHandle: 'tool', data: { kind: 'tool' } });
  });

  it('should lay out nodes without a position (input left of the agent, model above it, tools below), and keep nodes of unknown types', () => {
    const doc: FlowDefinition = {
      nodes: [
        { id: 'in', type: 'trigger.input' },
        { id: 'core', type: 'agent.core' },
        { id: 'm', type: 'model.llm' },
        { id: 't1', type: 'tool.http', config: { url: 'http://x' } },
        { id: 'x', type: 'tool.mysql', label: 'odd' },
      ],
      edges: [
        { id: 'e1', source: 'in', target: 'core' },
        { id: 'e2', source: 'core', target: 'm' },
        { id: 'e3', source: 'core', target: 't1' },
      ],
    };
    const { meta, nodes, edges } = fromFlowDocument(doc);
    const at = (id: string) => nodes.find((node) => node.id === id)?.position;
    expect(at('in')?.x).toBeLessThan(at('core')?.x ?? 0);
    expect(at('m')?.y).toBeLessThan(at('core')?.y ?? 0);
    expect(at('t1')?.y).toBeGreaterThan(at('core')?.y ?? 0);
    expect(new Set(nodes.map((node) => `${node.position.x},${node.position.y}`)).size).toBe(nodes.length);
    const unknown = nodes.find((node) => node.id === 'x');
    expect(unknown?.type).toBe(UNKNOWN_NODE_TYPE);
    const back = toFlowDocument(meta, nodes, edges);
    expect(back.nodes.find((node) => node.id === 'x')).toMatchObject({ type: 'tool.mysql', label: 'odd' });
    expect(back.nodes.find((node) => node.id === 'core')?.config).toBeUndefined();
  });

  it('should lay out a flow whose nodes are all at the same spot, and keep the positions of a well laid out one', () => {
    const stacked = example('order-status');
    const same = { ...stacked, nodes: stacked.nodes.map((node) => ({ ...node, position: { x: 40, y: 40 } })) };
    const spots = fromFlowDocument(same).nodes.map((node) => `${node.position.x},${node.position.y}`);
    expect(new Set(spots).size).toBe(same.nodes.length);
    const kept = fromFlowDocument(stacked).nodes.map((node) => node.position);
    expect(kept).toEqual(stacked.nodes.map((node) => node.position));
  });

  it('should round positions and give new edges ids nobody has', () => {
    const { meta, nodes, edges } = fromFlowDocument({ nodes: [{ id: 'a', type: 'trigger.input', position: { x: 10.4, y: 20.6 } }], edges: [] });
    expect(toFlowDocument(meta, nodes, edges).nodes[0]?.position).toEqual({ x: 10, y: 21 });
    expect(newEdgeId('a', 'b', new Set())).toBe('e_a_b');
    expect(newEdgeId('a', 'b', new Set(['e_a_b', 'e_a_b_2']))).toBe('e_a_b_3');
    expect(emptyFlow('x')).toEqual({ meta: { id: 'x', version: 1, name: 'x' }, nodes: [], edges: [] });
  });
});
