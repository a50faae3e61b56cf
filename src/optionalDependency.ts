import { ErrorCode, RedflowError } from './errors.js';

/**
 * Imports an optional peer dependency (`pg`, `tsx`) where a feature first needs it, so that users
 * without the feature neither install nor load the package. `load` is the `import()` itself, kept
 * literal at the call site so that tools reading imports still see it.
 *
 * @throws RedflowError `DEPENDENCY_MISSING`, whose hint is `npm install <name>`, when the package
 *   itself cannot be found; any other failure (the package is there but broken) as it was thrown.
 *
 * @example
 * ```ts
 * const pg = await importOptional('pg', 'a tool.postgres node', () => import('pg'));
 * ```
 */
export async function importOptional<T>(name: string, feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (!isPackageMissing(error, name)) throw error;
    throw new RedflowError(
      {
        code: ErrorCode.DEPENDENCY_MISSING,
        message: `${feature} needs the package '${name}', which is not installed`,
        hint: `npm install ${name} (next to redflow; it is an optional peer dependency)`,
      },
      { cause: error },
    );
  }
}

/** True when `error` says the package `name` itself (not one of its own dependencies) was not found. */
function isPackageMissing(error: unknown, name: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  // Node says "Cannot find package 'pg' imported from …" (or "Cannot find module 'pg'" from require).
  const quoted = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return typeof message === 'string' && new RegExp(`Cannot find (package|module) '${quoted}[/']`).test(message);
}
