import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';

/**
 * Where the files a flow names may be: each resolves, symbolic links followed, inside allowed
 * folders (its own folder, `--allow-files`, the flows directory of `redflow serve`). Flows, tools,
 * models, memory stores and the step service's workspace all check their paths here.
 */

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
