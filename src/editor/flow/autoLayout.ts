/**
 * Where a flow's nodes go when the file's positions do not make a legible canvas (a node without a
 * position, two nodes on top of each other, an edge running behind a third node).
 *
 * The layout library is `@dagrejs/dagre`: it is maintained (several releases a year, the latest in
 * 2026), synchronous (so opening a flow stays a pure conversion) and about 50 kB in the editor
 * bundle; `elkjs`, also maintained, is asynchronous and much larger (a Java library compiled to
 * JavaScript), more than layouts this simple need.
 *
 * The flow reads as the handles suggest: dagre ranks the chain input → agent → outputs left to
 * right; each agent's model goes above it and its tools and memory in a row below it (dagre is
 * given the agent with room for them), so no edge crosses another node. See {@link autoLayout}.
 */
import { Graph, layout } from '@dagrejs/dagre';
import { NodeRole, roleOf } from '../../flows/nodeTypes.js';

/** A point on the canvas (a node's top-left corner). */
export interface XY {
  readonly x: number;
  readonly y: number;
}

/** What the layout needs of a node: its id, its flow type and the file's position, if any. */
export interface LayoutNode {
  readonly id: string;
  readonly type: string;
  readonly position?: XY | undefined;
}

/** What the layout needs of an edge. */
export interface LayoutEdge {
  readonly source: string;
  readonly target: string;
}

/** The room a node card takes (its widest, and a little taller than it renders, so cards never touch). */
export const NODE_SIZE = { width: 240, height: 84 } as const;
/** The agent core's card is taller (room for its bottom handles). */
const CORE_HEIGHT = 100;
const GAP = 40;

const heightOf = (type: string) => (roleOf(type) === NodeRole.Core ? CORE_HEIGHT : NODE_SIZE.height);

/**
 * The nodes' positions: the file's when they make a legible canvas (see {@link needsLayout}),
 * otherwise a layout of every node.
 *
 * @example
 * ```ts
 * const at = layoutPositions(doc.nodes, doc.edges);
 * const position = at.get(node.id);
 * ```
 */
export function layoutPositions(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): Map<string, XY> {
  if (!needsLayout(nodes, edges)) return new Map(nodes.map((node) => [node.id, node.position as XY]));
  return autoLayout(nodes, edges);
}

/** True when a node has no position, two nodes overlap, or an edge's straight line passes through a third node. */
export function needsLayout(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): boolean {
  if (nodes.some((node) => node.position === undefined)) return true;
  const boxes = new Map(nodes.map((node) => [node.id, boxOf(node.position as XY, node.type)]));
  const all = [...boxes.values()];
  for (let i = 0; i < all.length; i += 1) {
    for (let j = i + 1; j < all.length; j += 1) if (overlaps(all[i] as Box, all[j] as Box)) return true;
  }
  return edges.some((edge) => {
    const from = boxes.get(edge.source);
    const to = boxes.get(edge.target);
    if (!from || !to) return false;
    const a = centreOf(from);
    const b = centreOf(to);
    return [...boxes].some(([id, box]) => id !== edge.source && id !== edge.target && segmentCrosses(a, b, box));
  });
}

/**
 * A layout of every node, whatever positions they had: dagre places the chain (inputs, agents with
 * room for their model above and their tools and memory below, outputs, anything unattached), then
 * each agent's model, tools and memory are put in that room. The room is only as wide as the agent's
 * card: its row of tools may reach under its neighbours, which keeps the canvas narrow enough to
 * read at 1280×720. When that is not legible (several inputs or outputs beside a long row), dagre
 * places every node by itself, in ranks left to right.
 */
export function autoLayout(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): Map<string, XY> {
  const around = layoutAroundAgents(nodes, edges, true);
  const placed = nodes.map((node) => ({ ...node, position: around.get(node.id) }));
  return needsLayout(placed, edges) ? layoutAroundAgents(nodes, edges, false) : around;
}

function layoutAroundAgents(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], aroundAgents: boolean): Map<string, XY> {
  const typeOf = new Map(nodes.map((node) => [node.id, node.type]));
  const satellites = aroundAgents ? satellitesOfAgents(nodes, edges, typeOf) : new Map<string, Satellites>();
  const attached = new Set([...satellites.values()].flatMap((s) => [...s.above, ...s.below]));

  const graph = new Graph();
  graph.setGraph({ rankdir: 'LR', nodesep: GAP, ranksep: GAP * 1.5, marginx: 0, marginy: 0 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) {
    if (attached.has(node.id)) continue;
    const s = satellites.get(node.id);
    if (!s) {
      graph.setNode(node.id, { width: NODE_SIZE.width, height: heightOf(node.type) });
      continue;
    }
    // Symmetric room above and below keeps the agent level with its inputs and outputs.
    const band = s.above.length > 0 || s.below.length > 0 ? NODE_SIZE.height + GAP : 0;
    graph.setNode(node.id, { width: NODE_SIZE.width, height: CORE_HEIGHT + 2 * band });
  }
  for (const edge of edges) {
    const source = attached.has(edge.source) ? agentOf(edge.source, satellites) : edge.source;
    const target = attached.has(edge.target) ? agentOf(edge.target, satellites) : edge.target;
    // Edges between an agent and its own satellites are drawn in the agent's room, not ranked.
    if (source === undefined || target === undefined || source === target) continue;
    if (graph.hasNode(source) && graph.hasNode(target)) graph.setEdge(source, target);
  }
  layout(graph);

  const at = new Map<string, XY>();
  for (const id of graph.nodes()) {
    const { x, y } = graph.node(id);
    at.set(id, { x: Math.round(x - NODE_SIZE.width / 2), y: Math.round(y - heightOf(typeOf.get(id) ?? '') / 2) });
  }
  for (const [agent, s] of satellites) {
    const centre = graph.node(agent);
    const row = (ids: readonly string[], y: number) =>
      ids.forEach((id, index) => {
        const width = ids.length * (NODE_SIZE.width + GAP) - GAP;
        at.set(id, { x: Math.round(centre.x - width / 2 + index * (NODE_SIZE.width + GAP)), y: Math.round(y) });
      });
    row(s.above, centre.y - CORE_HEIGHT / 2 - GAP - NODE_SIZE.height);
    row(s.below, centre.y + CORE_HEIGHT / 2 + GAP);
  }
  return at;
}

/** An agent's model (above it) and its memory and tools (below it, memory first as its handle is left of the tools'). */
interface Satellites {
  readonly above: string[];
  readonly below: string[];
}

function satellitesOfAgents(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], typeOf: Map<string, string>): Map<string, Satellites> {
  const result = new Map<string, Satellites>();
  for (const node of nodes) if (roleOf(node.type) === NodeRole.Core) result.set(node.id, { above: [], below: [] });
  const taken = new Set<string>();
  const ordered = [NodeRole.Model, NodeRole.Memory, NodeRole.Tool];
  for (const role of ordered) {
    for (const edge of edges) {
      for (const [agent, other] of [
        [edge.source, edge.target],
        [edge.target, edge.source],
      ] as const) {
        const s = result.get(agent);
        if (!s || taken.has(other) || roleOf(typeOf.get(other)) !== role) continue;
        taken.add(other);
        (role === NodeRole.Model ? s.above : s.below).push(other);
      }
    }
  }
  return result;
}

function agentOf(id: string, satellites: Map<string, Satellites>): string | undefined {
  for (const [agent, s] of satellites) if (s.above.includes(id) || s.below.includes(id)) return agent;
  return undefined;
}

interface Box {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

function boxOf(at: XY, type: string): Box {
  return { left: at.x, top: at.y, right: at.x + NODE_SIZE.width, bottom: at.y + heightOf(type) };
}

function overlaps(a: Box, b: Box): boolean {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

function centreOf(box: Box): XY {
  return { x: (box.left + box.right) / 2, y: (box.top + box.bottom) / 2 };
}

/** Whether the segment a–b passes through the box (sampled finely enough for node-sized boxes). */
function segmentCrosses(a: XY, b: XY, box: Box): boolean {
  const steps = 64;
  for (let i = 1; i < steps; i += 1) {
    const x = a.x + ((b.x - a.x) * i) / steps;
    const y = a.y + ((b.y - a.y) * i) / steps;
    if (x > box.left && x < box.right && y > box.top && y < box.bottom) return true;
  }
  return false;
}
