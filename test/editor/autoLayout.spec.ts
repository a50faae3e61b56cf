import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import { layoutPositions, NODE_SIZE, needsLayout, type LayoutNode, type XY } from '../../src/editor/flow/autoLayout.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const example = (name: string) => JSON.parse(readFileSync(path.join(root, 'examples', name, 'flow.json'), 'utf8')) as FlowDefinition;

const nodes: LayoutNode[] = [
  { id: 'in', type: 'trigger.input' },
  { id: 'core', type: 'agent.core' },
  { id: 'm', type: 'model.llm' },
  { id: 't1', type: 'tool.http' },
  { id: 't2', type: 'tool.module' },
  { id: 'mem', type: 'memory.kv' },
  { id: 'out', type: 'response.chat' },
];
const edges = [
  { source: 'in', target: 'core' },
  { source: 'core', target: 'm' },
  { source: 'core', target: 't1' },
  { source: 'core', target: 't2' },
  { source: 'core', target: 'mem' },
  { source: 'core', target: 'out' },
];

function expectNoOverlap(at: Map<string, XY>): void {
  const points = [...at.values()];
  points.forEach((a, i) =>
    points.slice(i + 1).forEach((b) => {
      const apart = Math.abs(a.x - b.x) >= NODE_SIZE.width || Math.abs(a.y - b.y) >= NODE_SIZE.height;
      expect(apart, `${JSON.stringify(a)} and ${JSON.stringify(b)} overlap`).toBe(true);
    }),
  );
}

describe('auto layout of flows without good positions', () => {
  it('should give nodes without a position distinct, non-overlapping positions that read input → agent → output, model above, tools and memory below', () => {
    const at = layoutPositions(nodes, edges);
    expect([...at.keys()].sort()).toEqual(nodes.map((node) => node.id).sort());
    expectNoOverlap(at);
    const p = (id: string) => at.get(id) as XY;
    expect(p('in').x).toBeLessThan(p('core').x);
    expect(p('core').x).toBeLessThan(p('out').x);
    expect(p('m').y).toBeLessThan(p('core').y);
    for (const below of ['t1', 't2', 'mem']) expect(p(below).y).toBeGreaterThan(p('core').y);
    expect(p('mem').x).toBeLessThan(p('t1').x);
    // The chain is level: input, agent and output share a row, so their edges run straight.
    expect(needsLayout(nodes.map((node) => ({ ...node, position: p(node.id) })), edges)).toBe(false);
  });

  it('should lay out a flow whose nodes are all at the same spot', () => {
    const stacked = nodes.map((node) => ({ ...node, position: { x: 100, y: 100 } }));
    expect(needsLayout(stacked, edges)).toBe(true);
    expectNoOverlap(layoutPositions(stacked, edges));
  });

  it('should keep a busy agent (several inputs and outputs beside its row of tools) without overlaps, reading left to right', () => {
    const busy: LayoutNode[] = [
      { id: 'core', type: 'agent.core' },
      ...[1, 2, 3].map((n) => ({ id: `in${n}`, type: 'trigger.input' })),
      ...[1, 2, 3].map((n) => ({ id: `out${n}`, type: 'response.chat' })),
      ...[1, 2, 3, 4].map((n) => ({ id: `t${n}`, type: 'tool.http' })),
    ];
    const wiring = busy.filter((node) => node.id !== 'core').map((node) => (node.id.startsWith('in') ? { source: node.id, target: 'core' } : { source: 'core', target: node.id }));
    const at = layoutPositions(busy, wiring);
    expectNoOverlap(at);
    const x = (id: string) => (at.get(id) as XY).x;
    for (const n of [1, 2, 3]) {
      expect(x(`in${n}`)).toBeLessThan(x('core'));
      expect(x(`out${n}`)).toBeGreaterThan(x('core'));
    }
  });

  it('should lay out a flow whose edge runs behind another node', () => {
    const row = [
      { id: 'a', type: 'agent.core', position: { x: 0, y: 0 } },
      { id: 't', type: 'tool.http', position: { x: 300, y: 0 } },
      { id: 'o', type: 'response.chat', position: { x: 600, y: 0 } },
    ];
    const wiring = [
      { source: 'a', target: 't' },
      { source: 'a', target: 'o' },
    ];
    expect(needsLayout(row, wiring)).toBe(true);
    const at = layoutPositions(row, wiring);
    expectNoOverlap(at);
    expect(needsLayout(row.map((node) => ({ ...node, position: at.get(node.id) })), wiring)).toBe(false);
  });

  it('should keep the positions of an already well positioned flow', () => {
    const placed = nodes.map((node, index) => ({ ...node, position: { x: index * 400, y: (index % 2) * 300 } }));
    const straight = [{ source: 'in', target: 'core' }];
    expect(needsLayout(placed, straight)).toBe(false);
    const at = layoutPositions(placed, straight);
    for (const node of placed) expect(at.get(node.id)).toEqual(node.position);
  });

  it.each(['order-status', 'weather-http', 'openai-agent', 'postgres-orders'])('should open examples/%s legibly', (name) => {
    const doc = example(name);
    const at = layoutPositions(doc.nodes, doc.edges);
    expectNoOverlap(at);
    expect(needsLayout(doc.nodes.map((node) => ({ ...node, position: at.get(node.id) })), doc.edges)).toBe(false);
  });
});
