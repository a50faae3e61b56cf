import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { FlowDefinition } from '../contracts/schema-types.js';
import { ApiError, ErrorCode, errorInfo, RedflowError } from '../errors.js';
import { locateJsonSyntaxError } from '../files/jsonSyntaxError.js';
import { MAX_FLOW_FILE_BYTES } from '../flows/loadFlow.js';
import { type FlowValidation, type ResolvedFlow, validateFlow } from '../flows/validateFlow.js';
import { validateFlowTree } from '../flows/agentRefs.js';
import { loadValidFlow } from '../flows/loadValidFlow.js';
import { checkFlowFiles } from '../flows/flowFiles.js';
import type { FlowSummary } from './apiTypes.js';
import { agentFilePath, listAgentFiles } from './agentFiles.js';
import { assertRealInside, walk } from './flowDirFiles.js';
import { FLOW_FILE_EXTENSION, flowFilePath, flowIdOfPath, flowIdProblem } from './flowIds.js';

/** A flow file read back: its JSON text and when it last changed. */
export interface StoredFlow {
  readonly text: string;
  readonly updatedAt: string;
}

/** A flow ready to run: valid, and where it lives. */
export interface RunnableFlow {
  /** The flow file's absolute path, or the address of the flow elsewhere (a Node-RED tab). */
  readonly flowPath: string;
  readonly flow: ResolvedFlow;
}

/**
 * Where `redflow serve` keeps its flows, addressed by id: a flows directory of files (see
 * flowIds.ts), or a Node-RED's tabs (`serve --node-red`). The API's routes speak only to this.
 */
export interface FlowStore {
  /** Every flow, by id; JSON files that are not flows (no `nodes` array) are left out. */
  list(): Promise<FlowSummary[]>;
  /** The flow's JSON text; 404 `FLOW_NOT_FOUND`, 413 `FLOW_TOO_LARGE`, 422 `FLOW_INVALID_JSON`. */
  read(id: string): Promise<StoredFlow>;
  /** Writes the flow (a file atomically: a temporary file renamed over the old one, creating folders). */
  save(id: string, flow: FlowDefinition): Promise<{ readonly created: boolean; readonly updatedAt: string }>;
  /** Deletes the flow; 404 `FLOW_NOT_FOUND` when there is none. */
  remove(id: string): Promise<void>;
  /**
   * Validates a flow as it would run from this store (`id` its place, when it has one): the graph,
   * and what running it here needs (the files it names inside the allowed folders, its subagents;
   * node kinds a Node-RED agent can have).
   */
  validate(body: unknown, id?: string): Promise<FlowValidation>;
  /** The stored flow, valid and ready to run: 404 when there is none, `FlowInvalidError` when it does not validate. */
  runnable(id: string): Promise<RunnableFlow>;
  /** The absolute path of an `.agent.md` agent by its id (its path, `.agent.md` included); 404 when there is none. Absent where there are no agent files. */
  agentPath?(id: string): Promise<string>;
}

/** The flows directory of `redflow serve`: flow files addressed by id (see flowIds.ts). */
export interface FileFlowStore extends FlowStore {
  /** The directory, absolute. */
  readonly dir: string;
  /** The absolute path of an existing flow file (404 when there is none), for running it. */
  existingPath(id: string): Promise<string>;
  /** The id of a flow file path inside the directory, if it is one. */
  idOfPath(file: string): string | undefined;
}

/** Options of {@link createFlowStore}. */
export interface FlowStoreOptions {
  /**
   * Save flows whose `tool.mcp` nodes name a `command` (a program the server would start when the
   * flow runs). Off by default: whoever may save flows could otherwise run any program here.
   */
  readonly allowMcpCommands?: boolean;
}

/**
 * A flow's `tool.mcp` node that would start a program, refused unless the store allows it: saving a
 * flow is an API call, and a command in it is code the server would run.
 */
function refuseMcpCommands(flow: FlowDefinition): void {
  const nodes = Array.isArray(flow.nodes) ? flow.nodes : [];
  nodes.forEach((node, index) => {
    const command = node?.type === 'tool.mcp' ? (node.config as { command?: unknown } | undefined)?.command : undefined;
    if (command === undefined) return;
    throw new ApiError(
      errorInfo(ErrorCode.MCP_COMMAND_NOT_ALLOWED, `node "${node.id}" (tool.mcp) would start the program ${JSON.stringify(command)} on this server, which does not save flows that start programs`, {
        hint: 'connect the MCP server over Streamable HTTP ("url") instead, or start `redflow serve --allow-mcp-commands` to let whoever may save flows here run programs as this server',
        path: `nodes[${index}].config.command`,
      }),
    );
  });
}

/**
 * Opens the flows directory (it need not exist yet: the first save creates it).
 *
 * Ids are checked strictly before a path is built (flowIds.ts), and every path is checked once
 * more after resolving symbolic links, so neither a crafted id nor a link inside the directory
 * reaches a file outside it. A listed flow is `valid` only when the files it names are inside the
 * directory or one of `allowFiles` too (see `checkFlowFiles`).
 *
 * @example
 * ```ts
 * const flows = createFlowStore('flows');
 * await flows.save('support/order-status', flow);
 * const { text } = await flows.read('support/order-status');
 * ```
 */
export function createFlowStore(flowsDir: string, allowFiles: readonly string[] = [], options: FlowStoreOptions = {}): FileFlowStore {
  const dir = path.resolve(flowsDir);
  const roots = [dir, ...allowFiles.map((folder) => path.resolve(folder))];

  const fileOf = async (id: string): Promise<string> => {
    const file = flowFilePath(dir, id);
    await assertRealInside(dir, file, id);
    return file;
  };

  const existingPath = async (id: string): Promise<string> => {
    const file = await fileOf(id);
    let isFile = false;
    try {
      isFile = (await stat(file)).isFile();
    } catch {
      // Missing: reported below.
    }
    if (!isFile) throw notFound(id);
    return file;
  };

  return {
    dir,
    async list() {
      const files = await walk(dir, '', 0, []);
      const summaries: FlowSummary[] = [];
      for (const relative of files) {
        const summary = await summarize(path.join(dir, relative), relative, roots);
        if (summary) summaries.push(summary);
      }
      // The `.agent.md` agents beside the flows, listed and run as the flows are.
      summaries.push(...(await listAgentFiles(dir)));
      return summaries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },

    async read(id) {
      const file = await fileOf(id);
      const { text, mtime } = await readFlowText(file, id);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        const at = locateJsonSyntaxError(text);
        throw new ApiError(
          errorInfo(ErrorCode.FLOW_INVALID_JSON, `the flow file of "${id}" is not valid JSON${at ? ` at line ${at.line}, column ${at.column}: ${at.reason}` : ''}`, {
            hint: 'fix the file by hand, or save the flow again to replace it',
          }),
        );
      }
      if (!isFlowObject(value)) throw notFound(id, 'is a JSON file, but not a flow (it has no "nodes" array)');
      return { text, updatedAt: mtime.toISOString() };
    },

    async save(id, flow) {
      if (options.allowMcpCommands !== true) refuseMcpCommands(flow);
      const file = await fileOf(id);
      const text = `${JSON.stringify(flow, null, 2)}\n`;
      const bytes = Buffer.byteLength(text);
      if (bytes > MAX_FLOW_FILE_BYTES) {
        // Checked on the file as written (pretty-printed), since that is what the loader reads.
        throw new ApiError(
          errorInfo(ErrorCode.FLOW_TOO_LARGE, `the flow would be a ${bytes}-byte file, over the ${MAX_FLOW_FILE_BYTES / (1024 * 1024)} MiB a flow may be`, {
            hint: 'a flow holds nodes and edges only: move large data (scripted answers, schemas) into separate files',
          }),
        );
      }
      const created = !(await exists(file));
      await mkdir(path.dirname(file), { recursive: true });
      // Check again now that the folders exist: one of them could be a link made meanwhile.
      await assertRealInside(dir, file, id);
      await writeAtomically(file, text);
      return { created, updatedAt: (await stat(file)).mtime.toISOString() };
    },

    async remove(id) {
      const file = await fileOf(id);
      try {
        await unlink(file);
      } catch (thrown) {
        if (errnoOf(thrown) === 'ENOENT' || errnoOf(thrown) === 'ENOTDIR') throw notFound(id);
        throw thrown;
      }
    },

    existingPath,

    async validate(body, id) {
      // A flow not saved yet: its relative paths are taken from the flows directory.
      const flowPath = id === undefined ? undefined : flowFilePath(dir, id);
      const baseDir = flowPath === undefined ? dir : path.dirname(flowPath);
      return validateFlowTree(validateFlow(body), body, { baseDir, roots: [baseDir, ...roots] }, flowPath);
    },

    async runnable(id) {
      const { flow, flowPath } = await loadValidFlow(await existingPath(id), id, roots);
      return { flow, flowPath };
    },

    idOfPath: (file) => flowIdOfPath(dir, file),
    agentPath: (id) => agentFilePath(dir, id),
  };
}

/** One listed file, or `undefined` when it is not a flow. */
async function summarize(file: string, relative: string, roots: readonly string[]): Promise<FlowSummary | undefined> {
  const id = relative.slice(0, -FLOW_FILE_EXTENSION.length).split(path.sep).join('/');
  if (flowIdProblem(id) !== undefined) return undefined;
  let text: string;
  let mtime: Date;
  try {
    ({ text, mtime } = await readFlowText(file, id));
  } catch (thrown) {
    // Too large to open: still listed, since it may well be a flow someone must fix.
    if (!(thrown instanceof RedflowError && thrown.code === ErrorCode.FLOW_TOO_LARGE)) return undefined;
    const stats = await stat(file).catch(() => undefined);
    return stats && { id, updatedAt: stats.mtime.toISOString(), valid: false };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // A flow with a syntax error (edited by hand) is listed as invalid, to be found and fixed;
    // opening it answers FLOW_INVALID_JSON with the line and column.
    return { id, updatedAt: mtime.toISOString(), valid: false };
  }
  if (!isFlowObject(value)) return undefined;
  const { name, description } = value as { name?: unknown; description?: unknown };
  return {
    id,
    ...(typeof name === 'string' && { name }),
    ...(typeof description === 'string' && { description }),
    updatedAt: mtime.toISOString(),
    valid: validateFlow(value).ok && (await checkFlowFiles(value, { baseDir: path.dirname(file), roots })).length === 0,
  };
}

/** A JSON object with a `nodes` array: what tells a flow from other JSON (answers files, data). */
function isFlowObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray((value as { nodes?: unknown }).nodes);
}

/** Reads a flow file as UTF-8 text (without a byte order mark), refusing one over the loader's limit. */
async function readFlowText(file: string, id: string): Promise<{ text: string; mtime: Date }> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (thrown) {
    if (['ENOENT', 'ENOTDIR', 'EISDIR'].includes(errnoOf(thrown))) throw notFound(id);
    throw thrown;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notFound(id);
    if (stats.size > MAX_FLOW_FILE_BYTES) {
      throw new ApiError(
        errorInfo(ErrorCode.FLOW_TOO_LARGE, `the flow file of "${id}" is larger than the ${MAX_FLOW_FILE_BYTES / (1024 * 1024)} MiB limit`, {
          hint: 'a flow holds nodes and edges only: move large data into separate files',
        }),
      );
    }
    const bytes = await handle.readFile();
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new ApiError(errorInfo(ErrorCode.FLOW_INVALID_JSON, `the flow file of "${id}" is not UTF-8 text`, { hint: 'save the flow file as UTF-8 JSON' }));
    }
    return { text: text.startsWith('\uFEFF') ? text.slice(1) : text, mtime: stats.mtime };
  } finally {
    await handle.close();
  }
}

/** Writes `text` to a temporary file beside `file`, flushes it, and renames it over `file`. */
async function writeAtomically(file: string, text: string): Promise<void> {
  // A dot-name, so a listing running meanwhile never sees the half-written file.
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx');
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (thrown) {
    await unlink(temporary).catch(() => undefined);
    throw thrown;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

function notFound(id: string, why = 'does not exist'): ApiError {
  return new ApiError(
    errorInfo(ErrorCode.FLOW_NOT_FOUND, `the flow "${id}" ${why}`, { hint: 'GET /api/flows lists the flows of the flows directory' }),
  );
}

function errnoOf(thrown: unknown): string {
  return typeof thrown === 'object' && thrown !== null && 'code' in thrown ? String((thrown as { code: unknown }).code) : '';
}
