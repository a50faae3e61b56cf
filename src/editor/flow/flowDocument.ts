/**
 * A flow document (the flow file's JSON) to React Flow nodes and edges and back. Pure: a document
 * converted to nodes and edges and back is the same document (positions are kept; edges get the
 * kind the edge rules give them).
 */
import type { FlowDefinition, FlowEdge, FlowNode } from '../../contracts/schema-types.js';
import { inferEdgeKind } from '../../flows/edgeRules.js';
import { isEdgeKind, isNodeType, roleOf } from '../../flows/nodeTypes.js';
import { layoutPositions } from './autoLayout.js';
import {
  SOURCE_HANDLES,
  TARGET_HANDLE,
  UNKNOWN_NODE_TYPE,
  flowTypeOf,
  type RedflowEdge,
  type RedflowNode,
} from './editorNodes.js';

/** Everything of a flow document except its nodes and edges. */
export type FlowMeta = Omit<FlowDefinition, 'nodes' | 'edges'>;

/** A flow as the editor holds it. */
export interface EditorFlow {
  readonly meta: FlowMeta;
  readonly nodes: RedflowNode[];
  readonly edges: RedflowEdge[];
}

/**
 * The editor's nodes and edges of a flow document. The file's positions are kept when they make a
 * legible canvas; otherwise every node is laid out ({@link layoutPositions}).
 *
 * @example
 * ```ts
 * const { meta, nodes, edges } = fromFlowDocument(await api.getFlow('order-status'));
 * ```
 */
export function fromFlowDocument(doc: FlowDefinition): EditorFlow {
  const { nodes: flowNodes, edges: flowEdges, ...meta } = doc;
  const at = layoutPositions(flowNodes, flowEdges);
  const nodes = flowNodes.map((node): RedflowNode => {
    const { x, y } = at.get(node.id) ?? { x: 0, y: 0 };
    const position = { x, y };
    const config = { ...(node.config ?? {}) };
    const data = node.label !== undefined ? { label: node.label, config } : { config };
    if (!isNodeType(node.type)) {
      return { id: node.id, position, type: UNKNOWN_NODE_TYPE, data: { ...data, flowType: node.type } };
    }
    return { id: node.id, position, type: node.type, data } as RedflowNode;
  });
  const typeOf = new Map(flowNodes.map((node) => [node.id, node.type]));
  const edges = flowEdges.map((edge) => toEditorEdge(edge, typeOf.get(edge.source), typeOf.get(edge.target)));
  return { meta, nodes, edges };
}

function toEditorEdge(edge: FlowEdge, sourceType: string | undefined, targetType: string | undefined): RedflowEdge {
  const inferred = sourceType !== undefined && targetType !== undefined ? inferEdgeKind(sourceType, targetType) : undefined;
  const kind = edge.kind ?? inferred;
  const result: RedflowEdge = {
    id: edge.id,
    source: edge.source,
    target: edge.target,
    sourceHandle: sourceHandleFor(sourceType, kind),
    targetHandle: TARGET_HANDLE,
    className: edgeClassName(kind),
    data: kind === undefined ? {} : { kind },
  };
  if (edge.label !== undefined) result.label = edge.label;
  return result;
}

/** The handle an edge of `kind` leaves a node of `sourceType` from. */
export function sourceHandleFor(sourceType: string | undefined, kind: string | undefined): string | null {
  const role = roleOf(sourceType);
  if (role === undefined) return null;
  const handles = SOURCE_HANDLES[role];
  if (kind !== undefined && (handles as readonly string[]).includes(kind)) return kind;
  return handles[0] ?? null;
}

/** The CSS class of an edge of `kind` (edges are coloured by kind). */
export function edgeClassName(kind: string | undefined): string {
  return isEdgeKind(kind) ? `edge-kind-${kind}` : 'edge-kind-unknown';
}

/**
 * The flow document of the editor's nodes and edges. Positions are rounded to whole pixels;
 * empty configs are left out; every edge says its kind.
 *
 * @example
 * ```ts
 * await api.saveFlow(flowId, toFlowDocument(meta, getNodes(), getEdges()));
 * ```
 */
export function toFlowDocument(meta: FlowMeta, nodes: readonly RedflowNode[], edges: readonly RedflowEdge[]): FlowDefinition {
  const typeOf = new Map(nodes.map((node) => [node.id, flowTypeOf(node)]));
  const flowNodes = nodes.map((node): FlowNode => {
    const out: FlowNode = { id: node.id, type: flowTypeOf(node) };
    if (node.data.label !== undefined && node.data.label !== '') out.label = node.data.label;
    if (Object.keys(node.data.config).length > 0) out.config = { ...node.data.config };
    out.position = { x: Math.round(node.position.x), y: Math.round(node.position.y) };
    return out;
  });
  const flowEdges = edges.map((edge): FlowEdge => {
    const out: FlowEdge = { id: edge.id, source: edge.source, target: edge.target };
    const sourceType = typeOf.get(edge.source);
    const targetType = typeOf.get(edge.target);
    const kind = edge.data?.kind ?? (sourceType && targetType ? inferEdgeKind(sourceType, targetType) : undefined);
    if (kind !== undefined) out.kind = kind;
    if (typeof edge.label === 'string') out.label = edge.label;
    return out;
  });
  return { ...meta, nodes: flowNodes, edges: flowEdges };
}

/** An edge id for a new edge from `source` to `target` that no edge in `taken` has. */
export function newEdgeId(source: string, target: string, taken: ReadonlySet<string>): string {
  const base = `e_${source}_${target}`;
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const id = `${base}_${n}`;
    if (!taken.has(id)) return id;
  }
}

/** A new, empty flow. */
export function emptyFlow(id: string): EditorFlow {
  return { meta: { id, version: 1, name: id }, nodes: [], edges: [] };
}
