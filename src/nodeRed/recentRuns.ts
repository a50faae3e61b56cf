import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { IterationStep, RunOutcome } from '../contracts/schema-types.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { isErrno } from '../events/fileLock.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import type { RunSummary } from '../server/apiTypes.js';
import { runResponse } from '../server/runSummary.js';
import { lastAction, type LastAction } from './lastAction.js';

/** A run as the agent's Runtime / Debug tab lists it. */
export interface RecentRun {
  readonly traceId: string;
  /** `running` here, `finished`, or `interrupted` (its log stops early: it goes on when the agent starts). */
  readonly status: RunSummary['status'];
  readonly startedAt: string;
  readonly iterations: number;
  /** The seq of its last event. */
  readonly lastSeq: number;
  readonly outcome?: RunOutcome;
  /** With status `waiting`: what the run waits for. */
  readonly waiting?: RunSummary['waiting'];
  /** One line per iteration: action, tool, confidence, duration, error code. */
  readonly timeline: readonly IterationStep[];
  /** The answer it ended with, or the last tool it called with its input. */
  readonly lastAction?: LastAction;
  /** The log file, for a run logged to a file. */
  readonly logPath?: string;
  /** The command that shows the run again, step by step. */
  readonly replay: string;
}

/**
 * The newest runs of an agent, from the logs in its runs folder (newest file first), each folded
 * from its log as `redflow replay` folds it. A log that cannot be read is left out.
 *
 * @example
 * ```ts
 * const runs = await recentRuns('/home/me/.node-red/redflow/runs/a1b2', new Set(host.describe().running), 10);
 * ```
 */
export async function recentRuns(runsDir: string, running: ReadonlySet<string>, limit: number): Promise<RecentRun[]> {
  let names: string[];
  try {
    names = (await readdir(runsDir)).filter((name) => name.endsWith('.jsonl'));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return [];
    throw error;
  }
  const dated = await Promise.all(
    names.map(async (name) => {
      const file = path.join(runsDir, name);
      const modified = await stat(file).then((info) => info.mtimeMs, () => 0);
      return { file, modified };
    }),
  );
  dated.sort((a, b) => b.modified - a.modified);
  const runs: RecentRun[] = [];
  for (const { file } of dated.slice(0, limit)) {
    const { events } = await readJsonlLog(file).catch(() => ({ events: [] }));
    const run = recentRun(events, running, { logPath: file, replay: `redflow replay ${file} --steps` });
    if (run !== undefined) runs.push(run);
  }
  return runs;
}

/** A run as the list shows it, folded from its log (`undefined` for a log with no start). */
export function recentRun(events: readonly AgentEvent[], running: ReadonlySet<string>, where: Pick<RecentRun, 'logPath' | 'replay'>): RecentRun | undefined {
  const first = events[0];
  const response = first === undefined ? undefined : runResponse(events, { active: running.has(first.traceId) });
  if (response === undefined) return undefined;
  const last = lastAction(events);
  return {
    traceId: response.traceId,
    status: response.status,
    startedAt: response.startedAt,
    iterations: response.iterations,
    lastSeq: response.lastSeq,
    ...(response.outcome !== undefined && { outcome: response.outcome }),
    ...(response.waiting !== undefined && { waiting: response.waiting }),
    timeline: response.envelope.observability.events,
    ...(last !== undefined && { lastAction: last }),
    ...where,
  };
}
