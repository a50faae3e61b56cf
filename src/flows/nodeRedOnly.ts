import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from './diagnostics.js';
import { NodeType } from './nodeTypes.js';

const HINT = 'run it in Node-RED (redflow serve --node-red <url>, or import `redflow convert` of it into Node-RED), or replace the tool by a tool.module, tool.http or tool.postgres';

/**
 * The `tool.flow` nodes of a flow, each as an error: their body is a Node-RED flow, which only an
 * agent running in Node-RED can call. Checked where a flow would run outside Node-RED (`redflow
 * run`, `validate`, `serve` on a flows directory, the workers); Node-RED's own wiring check does
 * not use it. Never throws, whatever `flow` is.
 *
 * @example
 * ```ts
 * const errors = nodeRedOnlyDiagnostics(flow); // [] unless the flow has a tool.flow
 * ```
 */
export function nodeRedOnlyDiagnostics(flow: unknown): FlowDiagnostic[] {
  const nodes = typeof flow === 'object' && flow !== null ? (flow as { nodes?: unknown }).nodes : undefined;
  if (!Array.isArray(nodes)) return [];
  const found: FlowDiagnostic[] = [];
  nodes.forEach((node: unknown, index) => {
    if (typeof node !== 'object' || node === null) return;
    const { id, type } = node as { id?: unknown; type?: unknown };
    if (type !== NodeType.ToolFlow || typeof id !== 'string') return;
    found.push(
      flowDiagnostic(Severity.Error, ErrorCode.FLOW_TOOL_NODE_RED_ONLY, `tool '${id}' is a ${NodeType.ToolFlow}: its body is a Node-RED flow, so this flow runs only in Node-RED`, {
        hint: HINT,
        path: `nodes[${index}].type`,
        nodeId: id,
      }),
    );
  });
  return found;
}

/**
 * The error a run outside Node-RED meets when its flow names a `tool.flow` (checked again where
 * tools are built, should a flow get there unvalidated).
 */
export function flowToolOutsideNodeRed(tool: string): RedflowError {
  return new RedflowError(errorInfo(ErrorCode.FLOW_TOOL_NODE_RED_ONLY, `tool "${tool}" is a ${NodeType.ToolFlow}, whose body is a Node-RED flow: it runs only in Node-RED`, { hint: HINT }));
}
