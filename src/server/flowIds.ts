import path from 'node:path';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';

/**
 * How deep flows may sit in the flows directory: at most this many folders above the file
 * (`team/project/stage/flow`). The listing scans no deeper, so a saved flow is always listed.
 */
export const MAX_FLOW_FOLDER_DEPTH = 3;

/** The extension of flow files: a flow's id is its path without it. */
export const FLOW_FILE_EXTENSION = '.json';

const MAX_FLOW_ID_LENGTH = 512;
/** A segment: letters, digits, `_`, `-` and `.`, not starting with `.` (no hidden files, no `..`). */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

/**
 * Why `id` is not a flow id, or `undefined` when it is one. Checked strictly, on the id alone,
 * before any path is built from it: segments of letters, digits, `_`, `-` and `.` separated by
 * `/`, none starting with `.` or ending with `.`, no `..` anywhere, at most
 * {@link MAX_FLOW_FOLDER_DEPTH} folders.
 */
export function flowIdProblem(id: string): string | undefined {
  if (id.length === 0) return 'it is empty';
  if (id.length > MAX_FLOW_ID_LENGTH) return `it is longer than ${MAX_FLOW_ID_LENGTH} characters`;
  if (id.includes('..')) return 'it contains ".."';
  const segments = id.split('/');
  if (segments.length > MAX_FLOW_FOLDER_DEPTH + 1) return `it is more than ${MAX_FLOW_FOLDER_DEPTH} folders deep`;
  for (const segment of segments) {
    if (segment === '') return 'it has an empty segment (a leading, trailing or double "/")';
    if (!SEGMENT.test(segment)) return `"${segment}" is not 1–128 letters, digits, _, - or . (not starting with .)`;
    if (segment.endsWith('.')) return `"${segment}" ends with "."`;
  }
  return undefined;
}

/**
 * Checks a flow id (see {@link flowIdProblem}) and returns it, or throws 400 `FLOW_ID_INVALID`.
 *
 * @example
 * ```ts
 * parseFlowId('support/order-status'); // 'support/order-status'
 * parseFlowId('../etc/passwd');        // throws FLOW_ID_INVALID
 * ```
 */
export function parseFlowId(id: string): string {
  const problem = flowIdProblem(id);
  if (problem === undefined) return id;
  throw new ApiError(
    errorInfo(ErrorCode.FLOW_ID_INVALID, `${JSON.stringify(id.slice(0, 100))} is not a flow id: ${problem}`, {
      hint: 'a flow id is the flow file\'s path in the flows directory without .json, e.g. "support/order-status"',
    }),
  );
}

/**
 * The file of a (checked) flow id in `flowsDir`. Builds the path from the id's segments and checks
 * that it stays inside the directory even so, since the id check is the only thing standing
 * between a URL and the file system.
 */
export function flowFilePath(flowsDir: string, id: string): string {
  const root = path.resolve(flowsDir);
  const file = path.join(root, ...parseFlowId(id).split('/')) + FLOW_FILE_EXTENSION;
  if (!isInside(root, file)) throw new ApiError(errorInfo(ErrorCode.FLOW_ID_INVALID, `"${id}" resolves outside the flows directory`));
  return file;
}

/**
 * The flow id of a file, when it is a `.json` file inside `flowsDir` whose path makes a valid id
 * (a run's log records its flow file's path: this names the flow the way the API does).
 */
export function flowIdOfPath(flowsDir: string, file: string): string | undefined {
  const relative = path.relative(path.resolve(flowsDir), path.resolve(file));
  if (relative === '' || !isInside(path.resolve(flowsDir), path.resolve(file)) || !relative.endsWith(FLOW_FILE_EXTENSION)) return undefined;
  const id = relative.slice(0, -FLOW_FILE_EXTENSION.length).split(path.sep).join('/');
  return flowIdProblem(id) === undefined ? id : undefined;
}

/** True when `file` is `root` or below it (lexically; both absolute). */
export function isInside(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
