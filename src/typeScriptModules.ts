import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ErrorCode, RedflowError } from './errors.js';
import { importOptional } from './optionalDependency.js';
import type * as TsxApi from 'tsx/esm/api';

/** Extensions of modules written in TypeScript. */
const TYPESCRIPT_EXTENSIONS: ReadonlySet<string> = new Set(['.ts', '.mts', '.cts', '.tsx']);

/**
 * Errors with which Node's own type stripping refuses a file before running any of it, where tsx
 * may still load it: syntax that is not erasable (`enum`, parameter properties), a file under
 * node_modules, a relative import written `./helper.js` for `helper.ts`.
 */
const NODE_CANNOT_STRIP: ReadonlySet<string> = new Set([
  'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX',
  'ERR_INVALID_TYPESCRIPT_SYNTAX',
  'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING',
  'ERR_UNKNOWN_FILE_EXTENSION',
  'ERR_MODULE_NOT_FOUND',
]);

/** True when `file` names a module written in TypeScript (`.ts`, `.mts`, `.cts`, `.tsx`). */
export function isTypeScriptPath(file: string): boolean {
  return TYPESCRIPT_EXTENSIONS.has(extname(file).toLowerCase());
}

/**
 * What imports the module `file` on this Node: `'node'` for JavaScript, and for TypeScript when
 * Node strips types itself (`process.features.typescript` is `'strip'` or `'transform'`: by default
 * from Node 22.18 and 23.6, with `--experimental-strip-types` from 22.10); `'tsx'` otherwise (Node
 * 20, type stripping turned off, and `.tsx` files, which Node does not strip).
 *
 * @param features Node's `process.features` (given in tests).
 *
 * @example
 * ```ts
 * moduleLoaderFor('tools/add.ts'); // 'node' on Node 24, 'tsx' on Node 20
 * moduleLoaderFor('tools/add.mjs'); // 'node'
 * ```
 */
export function moduleLoaderFor(file: string, features: { readonly typescript?: unknown } = process.features as { readonly typescript?: unknown }): 'node' | 'tsx' {
  if (!isTypeScriptPath(file)) return 'node';
  const stripsTypes = features.typescript === 'strip' || features.typescript === 'transform';
  return stripsTypes && extname(file).toLowerCase() !== '.tsx' ? 'node' : 'tsx';
}

/**
 * Imports a user's module (a tool, an agent definition) by its absolute path. TypeScript goes
 * through Node's own type stripping where this Node has it (see {@link moduleLoaderFor}), falling
 * back to tsx for a file Node refuses before running it (an `enum`, a file under node_modules);
 * elsewhere through tsx, an optional peer dependency loaded only then.
 *
 * @param feature What needs tsx, for the `DEPENDENCY_MISSING` message (e.g. 'a tool.module written in TypeScript').
 * @throws RedflowError `DEPENDENCY_MISSING` when tsx is needed and not installed; whatever the
 *   module throws while loading, as it was thrown (callers turn it into their own coded error).
 *
 * @example
 * ```ts
 * const namespace = await importUserModule('/srv/flows/tools/add.ts', 'a tool.module written in TypeScript');
 * ```
 */
export async function importUserModule(file: string, feature: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (moduleLoaderFor(file) === 'tsx') return importWithTsx(url, feature);
  try {
    return (await import(/* @vite-ignore */ url)) as Record<string, unknown>;
  } catch (error) {
    if (!isTypeScriptPath(file) || !NODE_CANNOT_STRIP.has(codeOf(error))) throw error;
    return importWithTsx(url, feature, error);
  }
}

/**
 * tsx's `tsImport`, loaded on first use so that flows without TypeScript never pay for it. After
 * Node's own stripping refused the file (`refused`), a missing tsx says why Node could not load it.
 */
async function importWithTsx(url: string, feature: string, refused?: unknown): Promise<Record<string, unknown>> {
  let tsImport: typeof TsxApi.tsImport;
  try {
    ({ tsImport } = await importOptional('tsx', feature, () => import('tsx/esm/api')));
  } catch (error) {
    if (refused === undefined || !(error instanceof RedflowError)) throw error;
    throw new RedflowError(
      {
        code: ErrorCode.DEPENDENCY_MISSING,
        message: `${error.message}; Node's own type stripping could not load it: ${refused instanceof Error ? refused.message : String(refused)}`,
        hint: `${error.hint ?? 'npm install tsx'}, or write the module in erasable TypeScript (no enum, no parameter properties) outside node_modules`,
      },
      { cause: refused },
    );
  }
  return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
}

function codeOf(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : '';
}
