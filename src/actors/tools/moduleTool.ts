import { stat } from 'node:fs/promises';
import { ErrorCode, RedflowError } from '../../errors.js';
import { flowFileInsideRoots } from '../../files/fileRoots.js';
import { hideLocalPaths } from '../../files/hideLocalPaths.js';
import { compileUserSchema } from '../../contracts/schemas.js';
import type { ToolModuleConfig } from '../../contracts/schema-types.js';
import type { ToolContext, ToolDefinition } from '../tool.js';

/** Per-call timeout of a module tool when `timeoutMs` is not configured. */
export const DEFAULT_MODULE_TOOL_TIMEOUT_MS = 30_000;

/** Tool names the model may use: what the flow schema allows for `name`. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Loads a `tool.module` node's tool: imports the module, picks the tool out of it, checks its shape
 * and wraps its `execute` with the per-call timeout.
 *
 * - `config.module` is resolved against `baseDir` (the flow file's directory) and must be inside
 *   `baseDir` or one of `allowFiles`, symbolic links followed (`FLOW_FILE_OUTSIDE_ROOTS` before
 *   anything is imported otherwise; URLs such as `file:` or `data:` are refused). `.js`/`.mjs`
 *   files are imported with `import()`; `.ts`/`.mts`/`.cts` files too where Node strips types
 *   itself (Node 22.18+ and 23.6+), else, and for `.tsx`, with tsx (`DEPENDENCY_MISSING` when the
 *   optional `tsx` package is needed and not installed; see `importUserModule`).
 * - The tool is `module[config.export]` when `export` is set, else the default export, else the
 *   module namespace itself (a module exporting `name`, `description`, … as named exports).
 * - `config.name` / `config.description`, when set, replace the module's own; the checks apply to
 *   the values that end up being used.
 * - Each call gets `config.timeoutMs` (default 30 s). When it passes, the signal given to `execute`
 *   is aborted and the call fails with `TOOL_TIMEOUT`; when the run's own signal aborts first, the
 *   call fails with `RUN_ABORTED`. Errors thrown by `execute` are passed on unchanged.
 *
 * Every loading problem (missing file, module that throws while loading, missing export, bad
 * `name`, `description`, `inputSchema` or `execute`) is a `RedflowError` with code
 * `TOOL_MODULE_INVALID` whose message names the file as the flow wrote it (never its absolute
 * path: the message may reach a remote client) and whose hint shows the expected shape.
 *
 * @example
 * ```ts
 * // tools/add.ts:
 * //   export default {
 * //     name: 'add',
 * //     description: 'Adds two numbers',
 * //     inputSchema: { type: 'object', required: ['a', 'b'] },
 * //     execute: ({ a, b }: { a: number; b: number }) => ({ sum: a + b }),
 * //   };
 * const tool = await loadModuleTool({ module: './tools/add.ts', timeoutMs: 5_000 }, flowDir);
 * await tool.execute({ a: 1, b: 2 }, context); // { sum: 3 }
 * ```
 */
export async function loadModuleTool(config: ToolModuleConfig, baseDir: string, allowFiles: readonly string[] = []): Promise<ToolDefinition> {
  const shown = JSON.stringify(config.module);
  const hint = expectedShapeHint(config.export);

  const timeoutMs = config.timeoutMs ?? DEFAULT_MODULE_TOOL_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RedflowError({
      code: ErrorCode.TOOL_CONFIG_INVALID,
      message: `tool module ${shown}: timeoutMs must be a positive number, got ${String(config.timeoutMs)}`,
      path: '/timeoutMs',
    });
  }

  const roots = [baseDir, ...allowFiles];
  const file = await flowFileInsideRoots(config.module, 'tool module', { baseDir, roots });
  const namespace = await importModule(file, config.module, hint, roots);
  const candidate = pickExport(namespace, config.export, config.module, hint);

  const name: unknown = config.name ?? candidate.name;
  const description: unknown = config.description ?? candidate.description;
  const inputSchema: unknown = candidate.inputSchema;
  const execute: unknown = candidate.execute;
  const idempotent: unknown = candidate.idempotent;

  const problems: string[] = [];
  if (typeof name !== 'string') {
    problems.push(`name must be a string, got ${describeValue(name)}`);
  } else if (!TOOL_NAME.test(name)) {
    problems.push(`name ${JSON.stringify(name)} must be 1-64 letters, digits, '_' or '-'`);
  }
  if (typeof description !== 'string') {
    problems.push(`description must be a string, got ${describeValue(description)}`);
  }
  if (!isPlainObject(inputSchema)) {
    problems.push(`inputSchema must be a JSON Schema object, got ${describeValue(inputSchema)}`);
  } else {
    try {
      compileUserSchema(inputSchema);
    } catch (error) {
      problems.push(`inputSchema is not a valid JSON Schema: ${messageOf(error)}`);
    }
  }
  if (typeof execute !== 'function') {
    problems.push(`execute must be a function, got ${describeValue(execute)}`);
  }
  if (idempotent !== undefined && typeof idempotent !== 'boolean') {
    problems.push(`idempotent must be true or false when given, got ${describeValue(idempotent)}`);
  }
  if (problems.length > 0) {
    throw new RedflowError({
      code: ErrorCode.TOOL_MODULE_INVALID,
      message: `tool module ${shown} (${exportLabel(config.export)}) is invalid: ${problems.join('; ')}`,
      hint,
      path: config.module,
    });
  }

  const run = execute as (input: Record<string, unknown>, context: ToolContext) => unknown;
  const toolName = name as string;
  return {
    name: toolName,
    description: description as string,
    inputSchema: inputSchema as Record<string, unknown>,
    ...(idempotent === true && { idempotent: true }),
    execute: (input, context) =>
      callWithTimeout((signal) => run.call(candidate, input, { ...context, signal }), context.signal, timeoutMs, toolName),
  };
}

/**
 * Imports `file` (after checking it exists), turning every failure into `TOOL_MODULE_INVALID`
 * that names it by `reference` (as the flow wrote it), with the local paths of `roots` hidden in the cause's message.
 */
async function importModule(file: string, reference: string, hint: string, roots: readonly string[]): Promise<Record<string, unknown>> {
  const shown = JSON.stringify(reference);
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new Error('not a file');
  } catch {
    throw new RedflowError({
      code: ErrorCode.TOOL_MODULE_INVALID,
      message: `tool module ${shown} does not exist or is not a file`,
      hint: 'the module path is relative to the flow file; check the node\'s "module" setting',
      path: reference,
    });
  }

  try {
    // Imported here: `import 'redflow'` needs no module loader until a flow has a tool.module.
    const { importUserModule } = await import('../../typeScriptModules.js');
    return await importUserModule(file, 'a tool.module written in TypeScript');
  } catch (error) {
    // A missing tsx is not a broken module: the flow is fine once the package is installed.
    if (error instanceof RedflowError && error.code === ErrorCode.DEPENDENCY_MISSING) throw error;
    throw new RedflowError(
      {
        code: ErrorCode.TOOL_MODULE_INVALID,
        message: `tool module ${shown} failed to load: ${hideLocalPaths(messageOf(error), roots)}`,
        hint,
        path: reference,
      },
      { cause: error },
    );
  }
}

/** The tool object out of the module namespace: the named export, the default export, or the namespace. */
function pickExport(
  namespace: Record<string, unknown>,
  exportName: string | undefined,
  reference: string,
  hint: string,
): Record<string, unknown> {
  const shown = JSON.stringify(reference);
  let candidate: unknown;
  if (exportName !== undefined) {
    candidate = namespace[exportName];
    if (candidate === undefined) {
      const available = Object.keys(namespace).filter((key) => key !== '__esModule');
      throw new RedflowError({
        code: ErrorCode.TOOL_MODULE_INVALID,
        message: `tool module ${shown} has no export named '${exportName}' (exports: ${available.length > 0 ? available.join(', ') : 'none'})`,
        hint,
        path: reference,
      });
    }
  } else {
    candidate = namespace.default ?? namespace;
    // A TypeScript file compiled as CommonJS shows up as `{ default: { __esModule, default: tool } }`.
    if (isObjectLike(candidate) && candidate.__esModule === true && candidate.default !== undefined) {
      candidate = candidate.default;
    }
  }
  if (!isObjectLike(candidate)) {
    throw new RedflowError({
      code: ErrorCode.TOOL_MODULE_INVALID,
      message: `tool module ${shown} (${exportLabel(exportName)}) must be an object, got ${describeValue(candidate)}`,
      hint,
      path: reference,
    });
  }
  return candidate;
}

/**
 * Runs `call` with a fresh signal that aborts after `timeoutMs` or when `parent` aborts. Settles as
 * soon as one of the three happens, even when the tool ignores its signal.
 */
async function callWithTimeout<T>(
  call: (signal: AbortSignal) => T | Promise<T>,
  parent: AbortSignal,
  timeoutMs: number,
  toolName: string,
): Promise<Awaited<T>> {
  const aborted = (): RedflowError =>
    new RedflowError({ code: ErrorCode.RUN_ABORTED, message: `tool '${toolName}' was aborted: the run was aborted` });
  if (parent.aborted) throw aborted();

  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onParentAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new RedflowError({
        code: ErrorCode.TOOL_TIMEOUT,
        message: `tool '${toolName}' did not finish within ${timeoutMs} ms`,
        hint: 'raise the node\'s "timeoutMs" or make the tool faster',
        retryable: true,
      });
      controller.abort(error);
      reject(error);
    }, timeoutMs);
    onParentAbort = () => {
      const error = aborted();
      controller.abort(error);
      reject(error);
    };
    parent.addEventListener('abort', onParentAbort, { once: true });
  });

  try {
    return await Promise.race([Promise.resolve().then(() => call(controller.signal)), stopped]);
  } finally {
    clearTimeout(timer);
    if (onParentAbort) parent.removeEventListener('abort', onParentAbort);
  }
}

function expectedShapeHint(exportName: string | undefined): string {
  const head = exportName === undefined ? 'export default' : `export const ${exportName} =`;
  return (
    `the module must export a tool like: ${head} { name: 'my_tool', description: 'What it does', ` +
    `inputSchema: { type: 'object', properties: { … } }, execute: async (input, context) => result }`
  );
}

function exportLabel(exportName: string | undefined): string {
  return exportName === undefined ? 'default export' : `export '${exportName}'`;
}

function isObjectLike(value: unknown): value is Record<string, unknown> {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (value === undefined) return 'nothing (undefined)';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
