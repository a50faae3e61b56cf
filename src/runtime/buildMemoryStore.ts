import path from 'node:path';
import type { MemoryStore } from '../actors/memory.js';
import { createFileMemoryStore } from '../actors/memory/fileMemoryStore.js';
import { createInProcessMemoryStore } from '../actors/memory/inProcessMemoryStore.js';
import { DEFAULT_FILE_MEMORY_PATH } from '../flows/flowFiles.js';
import type { RunPlan } from './runPlan.js';

/** The plan's memory, with the store an embedded run keeps it in. */
export interface BuiltMemory {
  readonly store: MemoryStore;
  readonly maxTurns: number;
  readonly nodeId: string;
}

/**
 * The memory store the flow's `memory.kv` node names, for an embedded run: `file` (one JSON file
 * per conversation, in a folder that must be inside the flow's folder or one of `allowFiles`) or
 * `memory` (this process only). `undefined` when the flow has no memory. Distributed mode keeps
 * memory in NATS KV instead, whatever the node says.
 *
 * @example
 * ```ts
 * const memory = buildMemoryStore(planRun(flow, baseDir));
 * ```
 */
export function buildMemoryStore(plan: Pick<RunPlan, 'memory' | 'baseDir'>, options: { readonly allowFiles?: readonly string[] } = {}): BuiltMemory | undefined {
  if (!plan.memory) return undefined;
  const { config, maxTurns, nodeId } = plan.memory;
  const store =
    config.store === 'file'
      ? createFileMemoryStore(path.resolve(plan.baseDir, config.path ?? DEFAULT_FILE_MEMORY_PATH), {
          roots: [plan.baseDir, ...(options.allowFiles ?? [])],
        })
      : createInProcessMemoryStore();
  return { store, maxTurns, nodeId };
}
