import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { liveLockHolder } from '../events/fileLock.js';
import { encodeJsonlLog, readJsonlLog } from '../events/jsonlEventStore.js';
import { DEFAULT_RUNS_DIR, resumeFromLog, type EmbeddedOptions, type EmbeddedRun } from './embeddedFlowRun.js';
import { checkParentLog, planFork, type ForkPlanOptions } from './forkPlan.js';

/**
 * Options of {@link forkRun}.
 *
 * @example
 * ```ts
 * const options: ForkRunOptions = { from: 'run.jsonl', at: 2, answers: { 3: { action: 'final', message: 'done', confidence: 1 } } };
 * ```
 */
export interface ForkRunOptions extends EmbeddedOptions, ForkPlanOptions {
  /** The parent run: its JSONL log, or its trace id (its log then in `runsDir`). */
  readonly from: string;
  /** Where trace ids are looked up and the fork's log goes by default (default `.redflow/runs`). */
  readonly runsDir?: string;
  /** The fork's log (must not exist yet); default `<runsDir>/<traceId>.jsonl`. */
  readonly logPath?: string;
  readonly traceId?: string;
}

/**
 * A fork under way: an embedded run, with its trace id.
 *
 * @example
 * ```ts
 * const fork: ForkedRun = await forkRun({ from: 'run.jsonl', at: 2 });
 * console.log(fork.traceId, fork.logPath, (await fork.finished()).outcome.status);
 * ```
 */
export interface ForkedRun extends EmbeddedRun {
  readonly traceId: string;
  /** The parent's log it was forked from. */
  readonly parentLog: string;
}

/**
 * Starts a new run that replays another run's log up to the start of an iteration, then goes on
 * live from there, with the changes given (another flow, model, instructions, scripted answers or
 * tool results). The fork's log begins with its own `run.started` and `run.forked` (its parent and
 * the fork point), then the parent's events up to that point, checked under the fork's flow; it
 * then goes on through the resume path a run takes after a crash (`resumeFromLog`), so a fork
 * killed mid-run is resumed like any run. The parent's log is only read.
 *
 * A parent that has not ended and whose log a live process holds (its lock) is refused: it is
 * still running, and its prefix could still change. A run that crashed, or is parked on a wait,
 * can be forked.
 *
 * @throws RedflowError `LOG_NOT_FOUND`; the log's own damage code (`LOG_RECORD_CORRUPT`,
 *   `LOG_PATH_INVALID`, …); `FORK_RUN_STILL_RUNNING`; `FORK_POINT_OUT_OF_RANGE`;
 *   `FORK_PREFIX_INCOMPATIBLE`.
 *
 * @example
 * ```ts
 * const fork = await forkRun({ from: '.redflow/runs/abc.jsonl', at: 2, model: { model: 'gpt-4o-mini' } });
 * const { outcome } = await fork.finished();
 * ```
 */
export async function forkRun(options: ForkRunOptions): Promise<ForkedRun> {
  const runsDir = options.runsDir ?? DEFAULT_RUNS_DIR;
  const parentLog = await resolveParentLog(options.from, runsDir);
  const parent = await readParentLog(parentLog);
  const { traceId, flowPath, events } = await planFork(parent, { traceId: (parent[0] as AgentEvent).traceId, log: parentLog }, options);
  const logPath = path.resolve(options.logPath ?? path.join(runsDir, `${traceId}.jsonl`));
  await mkdir(path.dirname(logPath), { recursive: true });
  await writeFile(logPath, encodeJsonlLog(events), { flag: 'wx' }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `${logPath} already holds a run`, { hint: 'give the fork another log file (--log)' }));
  });
  const { runsDir: _runsDir, from: _from, flow: _flow, model: _model, ...embedded } = options;
  const run = await resumeFromLog({ ...embedded, logPath, flowPath });
  return Object.assign(run, { traceId, parentLog });
}

/**
 * The parent's log file: `from` itself when it is a file, otherwise the log of trace id `from` in
 * `runsDir` (whether it exists is the reader's to say).
 *
 * @example
 * ```ts
 * const log = await resolveParentLog('abc', '.redflow/runs'); // <cwd>/.redflow/runs/abc.jsonl
 * ```
 */
export async function resolveParentLog(from: string, runsDir: string = DEFAULT_RUNS_DIR): Promise<string> {
  return path.resolve((await isFile(from)) ? from : path.join(runsDir, `${from}.jsonl`));
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then((found) => found.isFile(), () => false);
}

/**
 * A parent's log file, read only: a torn last record (a crash) is left out, any other damage
 * refused, and a run that has not ended while a live process holds its log (its lock) refused.
 *
 * @throws RedflowError `LOG_NOT_FOUND`; the log's damage code; `FORK_RUN_STILL_RUNNING`.
 *
 * @example
 * ```ts
 * const parent = await readParentLog('.redflow/runs/abc.jsonl');
 * ```
 */
export async function readParentLog(logPath: string): Promise<readonly AgentEvent[]> {
  const events = checkParentLog(await readJsonlLog(logPath), logPath);
  const last = events[events.length - 1];
  const holder = last !== undefined && !isTerminal(last) ? await liveLockHolder(logPath) : undefined;
  if (holder !== undefined) {
    throw new RedflowError(
      errorInfo(ErrorCode.FORK_RUN_STILL_RUNNING, `the run ${last?.traceId ?? ''} is still running: process ${holder} writes ${logPath}`, {
        hint: 'wait for it to end (or park on a wait), or stop it, then fork it; a crashed run can be forked as it is',
      }),
    );
  }
  return events;
}
