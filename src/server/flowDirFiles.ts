import { readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { FLOW_FILE_EXTENSION, MAX_FLOW_FOLDER_DEPTH, isInside } from './flowIds.js';

// Walking the flows directory, and keeping paths inside it: for its flow files and its agent files.

/** Files a listing looks at, at most: a wrong `--flows` (a home directory) stays cheap. */
export const MAX_LISTED_FILES = 2000;

/** The `.json` files (or those ending in `extension`) under `root/relative`, depth-first, skipping dot-folders, `node_modules` and links. */
export async function walk(root: string, relative: string, depth: number, found: string[], extension = FLOW_FILE_EXTENSION): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(path.join(root, relative), { withFileTypes: true });
  } catch {
    return found;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (found.length >= MAX_LISTED_FILES) break;
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const child = path.join(relative, entry.name);
    // Dirent types do not follow symbolic links: a link is neither, and is skipped.
    if (entry.isDirectory()) {
      if (depth < MAX_FLOW_FOLDER_DEPTH) await walk(root, child, depth + 1, found, extension);
    } else if (entry.isFile() && entry.name.endsWith(extension)) {
      found.push(child);
    }
  }
  return found;
}

/**
 * Refuses a path whose real location (symbolic links resolved, for the part that exists) is
 * outside the flows directory's.
 */
export async function assertRealInside(dir: string, file: string, id: string): Promise<void> {
  let realDir: string;
  try {
    realDir = await realpath(dir);
  } catch {
    return; // No directory yet: nothing in it can point outside.
  }
  let probe = file;
  for (;;) {
    try {
      const real = await realpath(probe);
      if (isInside(realDir, real)) return;
      throw new ApiError(errorInfo(ErrorCode.FLOW_ID_INVALID, `"${id}" leads outside the flows directory (through a symbolic link)`));
    } catch (thrown) {
      if (thrown instanceof ApiError) throw thrown;
      const parent = path.dirname(probe);
      if (parent === probe) return;
      probe = parent;
    }
  }
}

