import { useCallback, useEffect, useMemo, useRef } from 'react';
import type { FlowDiagnostic } from '../../flows/diagnostics.js';
import type { ValidationResponse } from '../../server/apiTypes.js';
import type { RedflowEdge, RedflowNode } from '../flow/editorNodes.js';
import type { NodeProblem } from './canvasStatus.js';

/** What a validation marks on the canvas and in the panels. */
export interface ValidationMarks {
  /** Each node with a problem: an error wins over a warning. */
  readonly problems: ReadonlyMap<string, NodeProblem>;
  /** The diagnostics about one node, errors first. */
  readonly diagnosticsOf: (nodeId: string) => FlowDiagnostic[];
}

/**
 * The last validation's marks on the graph. A validation describes the graph it was made for:
 * adding or removing a node or an edge makes it stale, and `clear` is called to drop it.
 *
 * @example
 * ```ts
 * const { problems, diagnosticsOf } = useValidationMarks(validation, nodes, edges, () => setValidation(undefined));
 * ```
 */
export function useValidationMarks(
  validation: ValidationResponse | undefined,
  nodes: readonly RedflowNode[],
  edges: readonly RedflowEdge[],
  clear: () => void,
): ValidationMarks {
  const graphShape = `${nodes.map((node) => node.id).join(',')}|${edges.map((edge) => edge.id).join(',')}`;
  const validatedShape = useRef(graphShape);
  useEffect(() => {
    if (validatedShape.current !== graphShape) clear();
  }, [graphShape, clear]);
  useEffect(() => {
    if (validation) validatedShape.current = graphShape;
  }, [validation, graphShape]);
  const problems = useMemo(() => {
    const map = new Map<string, NodeProblem>();
    for (const d of validation?.warnings ?? []) if (d.nodeId) map.set(d.nodeId, 'warning');
    for (const d of validation?.errors ?? []) if (d.nodeId) map.set(d.nodeId, 'error');
    return map;
  }, [validation]);
  const diagnosticsOf = useCallback(
    (nodeId: string): FlowDiagnostic[] => [...(validation?.errors ?? []), ...(validation?.warnings ?? [])].filter((d) => d.nodeId === nodeId),
    [validation],
  );
  return { problems, diagnosticsOf };
}
