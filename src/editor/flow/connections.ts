/**
 * The editor's side of the strict edge rules: a React Flow connection checked with the same
 * `checkConnection` the flow validation uses. A source handle's id is the kind of edge it makes,
 * so dragging from the core's "model" handle to a tool is refused as a kind mismatch.
 */
import type { Connection, Edge } from '@xyflow/react';
import { checkConnection, type ConnectionCheck } from '../../flows/edgeRules.js';
import { isEdgeKind } from '../../flows/nodeTypes.js';

/** The types of the two nodes of a connection, or `undefined` when a node is missing. */
export type NodeTypeLookup = (nodeId: string) => string | undefined;

/**
 * Checks a connection (or an edge being reconnected) with the flow's edge rules.
 *
 * @example
 * ```ts
 * checkEditorConnection({ source: 'agent', sourceHandle: 'model', target: 'tool1', targetHandle: 'in' }, typeOf)
 * // { ok: false, code: 'EDGE_KIND_MISMATCH', message: "agent.core → tool.module is a 'tool' edge, not a 'model' edge: …" }
 * ```
 */
export function checkEditorConnection(connection: Connection | Edge, typeOf: NodeTypeLookup): ConnectionCheck {
  const sourceType = typeOf(connection.source) ?? '(missing node)';
  const targetType = typeOf(connection.target) ?? '(missing node)';
  const handle = connection.sourceHandle;
  const kind = isEdgeKind(handle) ? handle : undefined;
  return checkConnection(sourceType, targetType, kind);
}
