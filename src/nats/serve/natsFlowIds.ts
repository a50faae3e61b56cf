import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Which flow of the flows directory a cluster run belongs to. A run's log names the flow by the
 * `id` inside the flow file the core workers host (`run.started` → `data.flow.id`), while the API
 * names flows by their path in the server's flows directory; this index maps one to the other.
 */
export interface FlowIdIndex {
  /** The flows-directory id of the file whose `id` is `definitionId` (the first in path order), if any. */
  directoryIdOf(definitionId: string): string | undefined;
  /** The `id` inside the flow file `directoryId`, or `undefined` when the file has none or cannot be read. */
  definitionIdOf(directoryId: string): string | undefined;
}

/** Files looked at, at most: a flows directory is small; this keeps a wrong `--flows` path cheap. */
const MAX_FILES = 2000;
/** A flow file larger than this is skipped (the flow loader refuses it anyway). */
const MAX_FLOW_BYTES = 5 * 1024 * 1024;
/** How long an index is reused: listing runs reads it, and editors list runs often. */
const INDEX_TTL_MS = 2000;

/**
 * Reads the `id` of every flow file (`*.json`, recursively, skipping dot-folders and
 * `node_modules`) in `flowsDir`. Unreadable or invalid files are left out: they cannot have
 * started a run the index needs to name.
 *
 * @example
 * ```ts
 * const index = await readFlowIdIndex('flows');
 * index.directoryIdOf('order-status'); // 'examples/order-status/flow'
 * ```
 */
export async function readFlowIdIndex(flowsDir: string): Promise<FlowIdIndex> {
  const byDefinition = new Map<string, string>();
  const byDirectory = new Map<string, string>();
  const files = (await walk(flowsDir, '')).sort();
  for (const relative of files) {
    const file = path.join(flowsDir, relative);
    try {
      if ((await stat(file)).size > MAX_FLOW_BYTES) continue;
      const parsed = JSON.parse(await readFile(file, 'utf8')) as unknown;
      const id = typeof parsed === 'object' && parsed !== null ? (parsed as { id?: unknown }).id : undefined;
      if (typeof id !== 'string') continue;
      const directoryId = relative.slice(0, -'.json'.length).split(path.sep).join('/');
      byDirectory.set(directoryId, id);
      if (!byDefinition.has(id)) byDefinition.set(id, directoryId);
    } catch {
      // Not a flow we can read: no run names it.
    }
  }
  return {
    directoryIdOf: (definitionId) => byDefinition.get(definitionId),
    definitionIdOf: (directoryId) => byDirectory.get(directoryId),
  };
}

/** The relative paths of the `.json` files under `dir`, at most {@link MAX_FILES}. */
async function walk(root: string, relative: string, found: string[] = []): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(path.join(root, relative), { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (found.length >= MAX_FILES) break;
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const child = path.join(relative, entry.name);
    if (entry.isDirectory()) await walk(root, child, found);
    else if (entry.isFile() && entry.name.endsWith('.json')) found.push(child);
  }
  return found;
}

/**
 * {@link readFlowIdIndex}, kept for a moment: listing runs asks for it each time, and the
 * directory seldom changes between two lists.
 *
 * @example
 * ```ts
 * const flowIds = cachedFlowIdIndex('flows');
 * const index = await flowIds();
 * ```
 */
export function cachedFlowIdIndex(flowsDir: string, ttlMs = INDEX_TTL_MS): () => Promise<FlowIdIndex> {
  let cached: { at: number; index: Promise<FlowIdIndex> } | undefined;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at > ttlMs) cached = { at: now, index: readFlowIdIndex(flowsDir) };
    return cached.index;
  };
}
