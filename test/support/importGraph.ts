import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** One relative import of a source file: where from, where to, and whether only types cross it. */
export interface SourceImport {
  readonly from: string;
  readonly to: string;
  readonly typeOnly: boolean;
}

const IMPORT = /^\s*(?:import|export)\s+(type\s+)?[^'";]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** Every `.ts` file under `dir` (relative to `src`), the browser editor and declaration files aside. */
export function sourceFiles(src: string, dir = ''): string[] {
  return readdirSync(path.join(src, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'editor' ? [] : sourceFiles(src, file);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** The relative imports of every source file under `src` (static and dynamic), as paths relative to `src`. */
export function sourceImports(src: string): SourceImport[] {
  return sourceFiles(src).flatMap((from) => {
    const text = readFileSync(path.join(src, from), 'utf8');
    return [...text.matchAll(IMPORT)].flatMap((match) => {
      const specifier = match[2] ?? match[3] ?? match[4] ?? '';
      if (!specifier.startsWith('.')) return [];
      const base = path.join(path.dirname(from), specifier).replace(/\.js$/, '');
      const to = [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')].find((candidate) => existsSync(path.join(src, candidate)));
      return to === undefined ? [] : [{ from, to, typeOnly: match[1] !== undefined }];
    });
  });
}

/** The folder of `src` a file belongs to: its first folder, or its own name for a file at the top. */
export function folderOf(file: string): string {
  const [first, ...rest] = file.split(path.sep);
  return rest.length > 0 ? (first as string) : (first as string).replace(/\.tsx?$/, '');
}
