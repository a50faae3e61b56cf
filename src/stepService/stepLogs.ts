import { mkdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { EventStore } from '../events/eventStore.js';
import { openJsonlEventStore } from '../events/jsonlEventStore.js';

/**
 * Where the step service keeps its sessions' run logs: the runs directory of an embedded server
 * (JSONL), or the cluster's JetStream trace stream (`redflow serve --nats`), where any server of
 * the cluster can answer a session's next step.
 */
export interface StepLogs {
  /** True when the run has a log here. */
  exists(traceId: string): Promise<boolean>;
  /**
   * The run's log for one step; close it when the step is done. A second writer of the same run at
   * the same time is refused (`LOG_CONCURRENT_WRITER`): at open for a JSONL log, at its first
   * append for JetStream.
   */
  open(traceId: string): Promise<EventStore>;
}

/**
 * Session logs as `<runsDir>/<traceId>.jsonl`, like every embedded run's: `redflow replay` and the
 * editor's Runs list show them.
 *
 * @example
 * ```ts
 * const logs = jsonlStepLogs('.redflow/runs');
 * ```
 */
export function jsonlStepLogs(runsDir: string): StepLogs {
  const fileOf = (traceId: string) => path.join(runsDir, `${traceId}.jsonl`);
  return {
    // An empty file is no log: opening a log creates its file, and a step refused before its first
    // event (or a server killed then) leaves it empty.
    exists: (traceId) => stat(fileOf(traceId)).then((file) => file.size > 0, () => false),
    async open(traceId) {
      await mkdir(runsDir, { recursive: true });
      const store = await openJsonlEventStore(fileOf(traceId));
      return {
        ...store,
        // Opening a log creates its file; a step refused before its first event (a history no run
        // could have, a query over the token budget) leaves no file behind. Removed before the
        // close releases the lock, so no other writer can have opened it in between.
        async close() {
          if (store.lastSeq() === 0) await unlink(store.path).catch(() => undefined);
          await store.close();
        },
      };
    },
  };
}
