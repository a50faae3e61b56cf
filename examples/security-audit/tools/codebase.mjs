// The code the example audits: every .js file under ../code, read line by line.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'code');

/** Each file of the codebase (relative to it) with its lines. */
export async function readCodebase() {
  const names = (await readdir(CODE_DIR, { recursive: true })).filter((name) => name.endsWith('.js')).sort();
  return Promise.all(names.map(async (name) => ({ file: name, lines: (await readFile(path.join(CODE_DIR, name), 'utf8')).split('\n') })));
}
