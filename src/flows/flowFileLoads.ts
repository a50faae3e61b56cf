import { stat } from 'node:fs/promises';
import { loadModuleTool } from '../actors/tools/moduleTool.js';
import type { ToolModuleConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../errors.js';
import { type FlowFileRoots, resolveFlowFile } from '../files/fileRoots.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from './diagnostics.js';
import { NodeType } from './nodeTypes.js';

/** A node that names a file a run opens at its start, read without trusting the flow's shape. */
interface FileNode {
  readonly nodeId: string;
  readonly index: number;
  readonly type: unknown;
  readonly config: Record<string, unknown>;
}

/**
 * Checks that the files a run opens at its start are there and load, so a flow that would fail
 * to start says so when it is validated or saved, with the code the run would give: each
 * `tool.module` is loaded as a run loads it (`TOOL_MODULE_INVALID` for a missing file or a module
 * that is not a tool, `DEPENDENCY_MISSING` without tsx), and each scripted `answersFile` must exist
 * (`ANSWERS_FILE_NOT_FOUND`). One error per node, on its field. Files outside the roots are left to
 * `checkFlowFiles`, which refuses them without opening them. Never throws on bad content.
 *
 * @example
 * ```ts
 * const errors = await checkFlowFilesLoad(flow, flowFileRoots('flows/support.json'));
 * ```
 */
export async function checkFlowFilesLoad(flow: unknown, roots: FlowFileRoots): Promise<FlowDiagnostic[]> {
  const diagnostics: FlowDiagnostic[] = [];
  for (const node of fileNodesOf(flow)) {
    const problem = await problemOf(node, roots);
    if (problem !== undefined) diagnostics.push(problem);
  }
  return diagnostics;
}

async function problemOf(node: FileNode, roots: FlowFileRoots): Promise<FlowDiagnostic | undefined> {
  const { module, answersFile } = node.config;
  if (node.type === NodeType.ToolModule && typeof module === 'string') {
    if (!(await resolveFlowFile(module, roots)).ok) return undefined;
    try {
      await loadModuleTool(node.config as unknown as ToolModuleConfig, roots.baseDir, roots.roots);
      return undefined;
    } catch (error) {
      return asDiagnostic(error, node, 'module');
    }
  }
  if (node.type === NodeType.ModelLlm && typeof answersFile === 'string') {
    const resolved = await resolveFlowFile(answersFile, roots);
    if (!resolved.ok || (await isFile(resolved.file))) return undefined;
    return flowDiagnostic(Severity.Error, ErrorCode.ANSWERS_FILE_NOT_FOUND, `node '${node.nodeId}': the scripted answers file ${JSON.stringify(answersFile)} does not exist`, {
      hint: "the path is relative to the flow file; check the node's \"answersFile\" setting",
      path: `nodes[${node.index}].config.answersFile`,
      nodeId: node.nodeId,
    });
  }
  return undefined;
}

/** A load failure as the run would report it, on the node's field. */
function asDiagnostic(error: unknown, node: FileNode, field: string): FlowDiagnostic {
  const code = error instanceof RedflowError ? error.code : ErrorCode.TOOL_MODULE_INVALID;
  const message = error instanceof RedflowError ? error.message : 'the tool module cannot be loaded';
  return flowDiagnostic(Severity.Error, code, `node '${node.nodeId}': ${message}`, {
    hint: error instanceof RedflowError ? error.hint : undefined,
    path: `nodes[${node.index}].config.${field}`,
    nodeId: node.nodeId,
  });
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

function fileNodesOf(flow: unknown): FileNode[] {
  const nodes = typeof flow === 'object' && flow !== null ? (flow as { nodes?: unknown }).nodes : undefined;
  if (!Array.isArray(nodes)) return [];
  const found: FileNode[] = [];
  nodes.forEach((node: unknown, index) => {
    if (typeof node !== 'object' || node === null) return;
    const { id, type, config } = node as { id?: unknown; type?: unknown; config?: unknown };
    if (typeof config !== 'object' || config === null) return;
    found.push({ nodeId: typeof id === 'string' ? id : `#${index}`, index, type, config: config as Record<string, unknown> });
  });
  return found;
}
