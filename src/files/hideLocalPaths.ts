import { realpathSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** An absolute path or a `file:` URL, as error messages of Node and tsx write them. */
const ABSOLUTE_PATH = /(?:file:\/\/)?(?<![\w.:/-])\/(?:[^\s'"`()<>:,;]+\/)*[^\s'"`()<>:,;]+/g;

/**
 * Takes the machine's own paths out of a message that may reach a remote client (a tool module
 * that failed to load, through `redflow serve`): a path inside one of `roots` becomes relative to
 * it, prefixed by the root folder's name (`flows/tools/x.mjs`); any other absolute path or `file:`
 * URL becomes `<path>`.
 *
 * @example
 * ```ts
 * hideLocalPaths("Cannot find module '/srv/app/flows/tools/dep.mjs'", ['/srv/app/flows']);
 * // "Cannot find module 'flows/tools/dep.mjs'"
 * ```
 */
export function hideLocalPaths(message: string, roots: readonly string[]): string {
  let text = message;
  // Longest first, so a root inside another is named by the closest one.
  const forms = roots.flatMap((root) => [path.resolve(root), realPathOf(root)]).filter((root): root is string => root !== undefined && path.dirname(root) !== root);
  const sorted = [...new Set(forms)].sort((a, b) => b.length - a.length);
  for (const root of sorted) {
    const name = path.basename(root) || '.';
    for (const form of [pathToFileURL(root).href, root]) {
      text = text.split(`${form}/`).join(`${name}/`).split(form).join(name);
    }
  }
  return text.replace(ABSOLUTE_PATH, '<path>');
}

function realPathOf(root: string): string | undefined {
  try {
    return realpathSync(root);
  } catch {
    return undefined;
  }
}
