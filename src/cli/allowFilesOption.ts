import path from 'node:path';

/** The `--allow-files <dir>` option (repeatable) of the commands that load a flow's files. */
export const allowFilesOptionSpec = { 'allow-files': { type: 'string', multiple: true } } as const;

/** Its line in a command's usage. */
export const allowFilesOptionHelp = `  --allow-files <dir>   a folder besides the flow file's own where the files it names (tool modules,
                        answers files, memory stores) may be; repeat for more. Anything else is
                        refused with FLOW_FILE_OUTSIDE_ROOTS before it is read`;

/**
 * The folders given with `--allow-files`, absolute (from the working directory).
 *
 * @example
 * ```ts
 * runFlowFile({ flowPath, input, allowFiles: allowedFolders(values) });
 * ```
 */
export function allowedFolders(values: Readonly<Record<string, unknown>>): string[] {
  const given = values['allow-files'];
  const list = Array.isArray(given) ? given : typeof given === 'string' ? [given] : [];
  return list.filter((dir): dir is string => typeof dir === 'string').map((dir) => path.resolve(dir));
}
