import { ErrorCode } from '../errors.js';
import { type FlowFileRoots, ROOTS_HINT, resolveFlowFile } from '../files/fileRoots.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from './diagnostics.js';
import { NodeType } from './nodeTypes.js';
import { nodeRedOnlyDiagnostics } from './nodeRedOnly.js';
import type { FlowValidation } from './validateFlow.js';

/** The `memory.kv` directory of `store: "file"` when the node gives no `path` (from the flow's folder). */
export const DEFAULT_FILE_MEMORY_PATH = '.redflow/memory';

/** A file a flow's node names, as written (or its default). */
export interface FlowFileReference {
  readonly nodeId: string;
  /** Where it is in the flow, as validation diagnostics say it: `nodes[3].config.module`. */
  readonly path: string;
  /** What the file is for, in words. */
  readonly what: string;
  readonly reference: string;
}

/**
 * Every file the nodes of a flow name: `tool.module` modules, scripted `answersFile`s, `agent.ref`
 * subagent flows and `memory.kv` file stores (their `path`, or {@link DEFAULT_FILE_MEMORY_PATH} for a file store without
 * one). Reads any value without throwing, so a half-built flow saved from the editor is fine.
 *
 * @example
 * ```ts
 * flowFileReferences(flow); // [{ nodeId: 'lookup', path: 'nodes[2].config.module', what: 'tool module', reference: 'tools/lookup.ts' }]
 * ```
 */
export function flowFileReferences(flow: unknown): FlowFileReference[] {
  const nodes = typeof flow === 'object' && flow !== null ? (flow as { nodes?: unknown }).nodes : undefined;
  if (!Array.isArray(nodes)) return [];
  const found: FlowFileReference[] = [];
  nodes.forEach((node: unknown, index) => {
    if (typeof node !== 'object' || node === null) return;
    const { id, type, config } = node as { id?: unknown; type?: unknown; config?: unknown };
    if (typeof config !== 'object' || config === null) return;
    const nodeId = typeof id === 'string' ? id : `#${index}`;
    const add = (key: string, what: string, reference: unknown) => {
      if (typeof reference === 'string') found.push({ nodeId, path: `nodes[${index}].config.${key}`, what, reference });
    };
    const fields = config as Record<string, unknown>;
    if (type === NodeType.ToolModule) add('module', 'tool module', fields.module);
    else if (type === NodeType.ModelLlm) add('answersFile', 'scripted answers file', fields.answersFile);
    else if (type === NodeType.AgentRef) add('flow', 'subagent flow', fields.flow);
    else if (type === NodeType.MemoryKv) {
      add('path', 'memory store folder', fields.path ?? (fields.store === 'file' ? DEFAULT_FILE_MEMORY_PATH : undefined));
    }
  });
  return found;
}

/**
 * Checks every file a flow names (see {@link flowFileReferences}) against the roots: one
 * `FLOW_FILE_OUTSIDE_ROOTS` error diagnostic for each that is refused.
 *
 * @example
 * ```ts
 * const errors = await checkFlowFiles(flow, flowFileRoots(flowPath));
 * ```
 */
export async function checkFlowFiles(flow: unknown, roots: FlowFileRoots): Promise<FlowDiagnostic[]> {
  const diagnostics: FlowDiagnostic[] = [];
  for (const file of flowFileReferences(flow)) {
    const resolved = await resolveFlowFile(file.reference, roots);
    if (resolved.ok) continue;
    diagnostics.push(
      flowDiagnostic(
        Severity.Error,
        ErrorCode.FLOW_FILE_OUTSIDE_ROOTS,
        `node '${file.nodeId}': the ${file.what} ${JSON.stringify(file.reference)} is refused: ${resolved.why}`,
        { hint: ROOTS_HINT, path: file.path, nodeId: file.nodeId },
      ),
    );
  }
  return diagnostics;
}

/**
 * A flow's validation with its files checked too (see {@link checkFlowFiles}): the refused ones
 * are added to its errors, so a flow that could not run says so when it is saved or validated; so
 * are its `tool.flow` nodes, which run only in Node-RED (`FLOW_TOOL_NODE_RED_ONLY`).
 *
 * @example
 * ```ts
 * const result = await validateFlowFiles(validateFlow(body), body, flowFileRoots(file, allowFiles));
 * ```
 */
export async function validateFlowFiles(validation: FlowValidation, flow: unknown, roots: FlowFileRoots): Promise<FlowValidation> {
  const outside = [...nodeRedOnlyDiagnostics(flow), ...(await checkFlowFiles(flow, roots))];
  if (outside.length === 0) return validation;
  return { ok: false, errors: [...(validation.ok ? [] : validation.errors), ...outside], warnings: validation.warnings };
}
