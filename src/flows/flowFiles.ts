import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from './diagnostics.js';
import { NodeType } from './nodeTypes.js';
import { nodeRedOnlyDiagnostics } from './nodeRedOnly.js';
import type { FlowValidation } from './validateFlow.js';

/** The `memory.kv` directory of `store: "file"` when the node gives no `path` (from the flow's folder). */
export const DEFAULT_FILE_MEMORY_PATH = '.redflow/memory';

/** How to fix a `FLOW_FILE_OUTSIDE_ROOTS` refusal. */
export const ROOTS_HINT =
  'keep the files a flow names in its folder, with relative paths, or allow their folder with --allow-files <dir> ' +
  '(redflow serve allows its flows directory)';

/**
 * Where a flow's files may be: its relative paths start from `baseDir` (the flow file's folder),
 * and every file must resolve, symbolic links followed, inside one of `roots`.
 */
export interface FlowFileRoots {
  readonly baseDir: string;
  readonly roots: readonly string[];
}

/**
 * The roots of a flow file: its own folder and the folders given besides (`--allow-files`, the
 * flows directory of `redflow serve`).
 *
 * @example
 * ```ts
 * flowFileRoots('/srv/flows/support/flow.json', ['/srv/flows']); // { baseDir: '/srv/flows/support', roots: [...] }
 * ```
 */
export function flowFileRoots(flowPath: string, allowFiles: readonly string[] = []): FlowFileRoots {
  const baseDir = path.dirname(path.resolve(flowPath));
  return { baseDir, roots: [baseDir, ...allowFiles.map((dir) => path.resolve(dir))] };
}

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

/** A reference that resolved inside the roots (`file` is its real path), or why it did not. */
export type FlowFileResolution = { readonly ok: true; readonly file: string } | { readonly ok: false; readonly why: string };

/** A URL scheme (`file:`, `data:`, `node:`, `https:`): two letters at least, so `C:` stays a path. */
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]+:/;

/**
 * Resolves a file a flow names and checks that it is inside the roots: `reference` is taken from
 * `baseDir`, then its real path (every symbolic link followed, in the file and in its folders) must
 * be inside the real path of a root. A file that does not exist yet (a memory store's folder) is
 * judged by its nearest existing folder. URLs (`file:`, `data:`, …), backslashes and NUL
 * characters are refused outright: they are not paths in a flow on every platform.
 *
 * The answer never holds the absolute path of anything in its `why`: it may be sent to a remote
 * client. Use the returned `file` for the I/O itself, so what is read is what was checked.
 *
 * @example
 * ```ts
 * await resolveFlowFile('../outside/evil.mjs', flowFileRoots('flows/esc.json')); // { ok: false, why: '…' }
 * ```
 */
export async function resolveFlowFile(reference: string, { baseDir, roots }: FlowFileRoots): Promise<FlowFileResolution> {
  if (reference.trim() === '') return { ok: false, why: 'it is empty' };
  if (reference.includes('\0')) return { ok: false, why: 'it holds a NUL character' };
  if (reference.includes('\\')) return { ok: false, why: 'it holds a backslash (write paths in a flow with "/")' };
  if (URL_SCHEME.test(reference)) return { ok: false, why: 'it is a URL, not a path to a file' };
  return realPathInsideRoots(path.resolve(baseDir, reference), roots);
}

/**
 * The real path of an absolute `file` (every symbolic link followed; for a file that does not
 * exist yet, its nearest existing folder's real path with the rest appended) when it is inside
 * the real path of one of `roots`, or why not. What {@link resolveFlowFile} checks once a
 * reference is a path; stores that open files later (the file memory store) check again with it.
 *
 * @example
 * ```ts
 * await realPathInsideRoots('/srv/flows/.redflow/memory', ['/srv/flows']); // { ok: true, file: '/srv/flows/.redflow/memory' }
 * ```
 */
export async function realPathInsideRoots(file: string, roots: readonly string[]): Promise<FlowFileResolution> {
  const real = await realLocation(file);
  if (real === undefined) return { ok: false, why: 'it goes through a symbolic link that leads nowhere' };
  for (const root of roots) {
    const realRoot = await realLocation(path.resolve(root));
    if (realRoot !== undefined && isInside(realRoot, real)) return { ok: true, file: real };
  }
  return { ok: false, why: 'it leads outside the folders allowed for flow files' };
}

/**
 * Like {@link resolveFlowFile}, for run time: the real path, or a `FLOW_FILE_OUTSIDE_ROOTS`
 * error naming the file as the flow wrote it.
 *
 * @throws RedflowError FLOW_FILE_OUTSIDE_ROOTS before anything is read, imported or written.
 */
export async function flowFileInsideRoots(reference: string, what: string, roots: FlowFileRoots): Promise<string> {
  const resolved = await resolveFlowFile(reference, roots);
  if (resolved.ok) return resolved.file;
  throw new RedflowError(errorInfo(ErrorCode.FLOW_FILE_OUTSIDE_ROOTS, `the ${what} ${JSON.stringify(reference)} is refused: ${resolved.why}`, { hint: ROOTS_HINT }));
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

/**
 * The real path of `file`, symbolic links resolved; for a path that does not exist yet, the real
 * path of its nearest existing folder with the rest appended. `undefined` when a link on the way
 * leads nowhere (it could be made to lead anywhere later).
 */
async function realLocation(file: string): Promise<string | undefined> {
  let probe = file;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(await realpath(probe), ...rest);
    } catch {
      // Missing (or not a folder): a dangling link is refused, anything else judged by its parent.
      if (await isLink(probe)) return undefined;
      const parent = path.dirname(probe);
      if (parent === probe) return undefined;
      rest.unshift(path.basename(probe));
      probe = parent;
    }
  }
}

async function isLink(file: string): Promise<boolean> {
  try {
    return (await lstat(file)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** True when `file` is `root` or below it (both absolute and real). */
function isInside(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
