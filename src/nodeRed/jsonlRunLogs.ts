import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { openJsonlEventStore, readJsonlLog, repairTornTail, type JsonlFsyncMode } from '../events/jsonlEventStore.js';
import { isTerminal } from '../events/eventTypes.js';
import { isValidTraceId } from '../runtime/ids.js';
import { recentRuns } from './recentRuns.js';
import type { RunLog, RunLogs, UnfinishedRun } from './runLogs.js';
import { unfinishedLogs } from './unfinishedLogs.js';

/**
 * An agent's run logs as JSONL files in `dir`, one `<traceId>.jsonl` per run: the format of
 * `redflow run`'s logs, with its checksums, locks and torn-record repair.
 *
 * @example
 * ```ts
 * const logs = jsonlRunLogs('/home/me/.node-red/redflow/runs/a1b2', 'always');
 * ```
 */
export function jsonlRunLogs(dir: string, fsync: JsonlFsyncMode): RunLogs {
  const open = async (logPath: string): Promise<RunLog> => {
    const store = await openJsonlEventStore(logPath, { fsync });
    const close = async (): Promise<void> => {
      await store.close();
      // A run that failed before its first event leaves no empty log behind.
      if (store.lastSeq() === 0) await rm(logPath, { force: true });
    };
    return { store, logPath, close };
  };
  return {
    where: dir,
    async create(traceId) {
      await mkdir(dir, { recursive: true });
      return open(path.join(dir, `${traceId}.jsonl`));
    },
    async read(traceId) {
      // Checked first: the id becomes a file name.
      if (!isValidTraceId(traceId)) return undefined;
      try {
        const { events } = await readJsonlLog(path.join(dir, `${traceId}.jsonl`));
        return events.length === 0 ? undefined : events;
      } catch (error) {
        if (error instanceof RedflowError && error.code === ErrorCode.LOG_NOT_FOUND) return undefined;
        throw error;
      }
    },
    async reopen(traceId) {
      if (!isValidTraceId(traceId)) throw new RedflowError(errorInfo(ErrorCode.LOG_NOT_FOUND, `no run ${traceId}`));
      return open(path.join(dir, `${traceId}.jsonl`));
    },
    async *unfinished(onProblem) {
      for (const logPath of await unfinishedLogs(dir)) {
        let found: UnfinishedRun | undefined;
        try {
          let read = await readJsonlLog(logPath);
          if (read.problems[0]?.code === ErrorCode.LOG_RECORD_TORN) {
            await repairTornTail(logPath);
            read = await readJsonlLog(logPath);
          }
          const [damage] = read.problems;
          if (damage !== undefined) throw new RedflowError(errorInfo(damage.code, `line ${damage.position}: ${damage.message}`));
          const last = read.events.at(-1);
          if (last !== undefined && !isTerminal(last)) found = { traceId: last.traceId, events: read.events, log: await open(logPath) };
        } catch (error) {
          onProblem(logPath, error);
        }
        if (found !== undefined) yield found;
      }
    },
    recent: (running, limit) => recentRuns(dir, running, limit),
    async close() {},
  };
}
