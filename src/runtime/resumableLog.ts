import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { LogProblem } from '../events/eventStore.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { clearDeadLock } from '../events/fileLock.js';
import { readJsonlLog, repairTornTail } from '../events/jsonlEventStore.js';

/** A JSONL log read back to resume its run from. */
export interface ResumableLog {
  readonly events: readonly AgentEvent[];
  /** A torn last record (a crash in the middle of a write) that was cut off. */
  readonly repaired?: LogProblem;
}

/**
 * Reads the JSONL log at `logPath` (an absolute path) to resume its run: a torn last record is cut
 * off the file and reported; any other damage stops with an error, since a run must not go on from
 * a log that cannot be trusted. A lock left by a writer that has died is removed (`clearDeadLock`).
 *
 * @throws RedflowError with the damage's code (`LOG_RECORD_CORRUPT`, `LOG_PATH_INVALID`, …), naming
 *   the line.
 */
export async function readResumableLog(logPath: string): Promise<ResumableLog> {
  let read = await readJsonlLog(logPath);
  let repaired: LogProblem | undefined;
  const [problem] = read.problems;
  if (problem && problem.code === ErrorCode.LOG_RECORD_TORN) {
    await repairTornTail(logPath);
    repaired = problem;
    read = await readJsonlLog(logPath);
  }
  const [damage] = read.problems;
  if (damage) {
    throw new RedflowError(
      errorInfo(damage.code, `${logPath} line ${damage.position}: ${damage.message}`, {
        hint: 'the log is damaged before its end and cannot be trusted to resume from; `redflow replay` shows what is readable',
      }),
    );
  }
  // A writer killed after the run's last event leaves its lock: a run that has ended is never
  // opened for writing again (a caller's call finds it ended), so it is cleared here.
  await clearDeadLock(logPath);
  return repaired === undefined ? { events: read.events } : { events: read.events, repaired };
}
