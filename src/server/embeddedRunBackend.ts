import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, errorInfo, RedflowError } from '../errors.js';
import type { JsonlFsyncMode } from '../events/jsonlEventStore.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { followJsonlLog } from '../events/jsonlFollow.js';
import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';
import { pendingWait, type WaitAnswer } from '../events/pendingWait.js';
import { RunHost } from '../host/runHost.js';
import type { AnsweredRun } from '../host/takeAnswer.js';
import { DEFAULT_RUNS_DIR, resumeFromLog, runFlowFile } from '../host/embeddedFlowRun.js';
import { isValidTraceId, randomIds, type IdSource } from '../runtime/ids.js';
import type { RunResponse, RunSummary } from './apiTypes.js';
import { flowIdOfPath } from './flowIds.js';
import { agentIdOfPath, isAgentId } from './agentFiles.js';
import type { AbortAnswer, InspectorFactory, RunBackend } from './runBackend.js';
import { runResponse, runSummary } from './runSummary.js';

/** Options of {@link createEmbeddedRunBackend}. */
export interface EmbeddedRunBackendOptions {
  /** The flows directory: a run's flow file inside it is named by its flow id. */
  readonly flowsDir: string;
  /** Where run logs are written and read (default `.redflow/runs`, the CLI's: its runs are listed too). */
  readonly runsDir?: string;
  /** Gives each run's statechart an inspection observer (the Stately inspector). */
  readonly inspector?: InspectorFactory;
  /** The environment the runs' models and tools see (API keys, base URLs); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  readonly ids?: IdSource;
  readonly fsync?: JsonlFsyncMode;
  /** Folders besides the flow file's own where the files it names may be (default: the flows directory). */
  readonly allowFiles?: readonly string[];
  /** Told when a run fails after it started (its log or actors failing to close): for the server's log. */
  readonly onRunError?: (traceId: string, error: unknown) => void;
  /** How often waiting runs are checked for a passed deadline, and followed logs looked at when no change was reported (default 1 s). */
  readonly sweepMs?: number;
  /** How often the runs folder is read again for runs parked by other processes (default 60 s; also at the start). */
  readonly rescanMs?: number;
}

/** A finished run's summary, kept while its log file is unchanged (a finished log never changes). */
interface CachedSummary {
  readonly mtimeMs: number;
  readonly size: number;
  readonly summary: RunSummary;
}

const SUMMARY_CACHE_SIZE = 1000;
const LOG_EXTENSION = '.jsonl';

/**
 * The embedded run backend of `redflow serve`: runs execute in this process (runFlowFile), each
 * with its JSONL log `<runsDir>/<traceId>.jsonl`. Runs under way are kept in memory with their
 * events and followers; ended runs, and runs of other processes (the CLI's), are read from their
 * logs. A log without a terminal event that is not under way here is `waiting` when it ends in a
 * wait for an answer from outside, else `interrupted`.
 *
 * A run that waits (an approval, a client tool's result) is parked: its log holds the wait and no
 * memory holds the run. {@link RunBackend.answer} resumes it from its log with the answer, through
 * the run host (`RunHost`), whose timers end the waits whose deadline has passed (`WAIT_EXPIRED`),
 * including those of runs parked by other processes in the same runs folder (read again every `rescanMs`).
 *
 * Following a run is following its log file (`followJsonlLog`, the JSONL store's follow): the
 * runs of this process wake their followers as each record is written, and the file is watched
 * for the runs of other processes (the CLI's, another server's resuming a parked run), so a parked
 * run's followers see its resumption wherever it happens, with nothing kept for them here.
 *
 * @example
 * ```ts
 * const backend = createEmbeddedRunBackend({ flowsDir: 'flows' });
 * const { traceId } = await backend.start({ flowId: 'demo', flowPath: '/abs/flows/demo.json', flow, input: 'hi' });
 * for await (const event of backend.follow(traceId, 0)) console.log(event.seq, event.type);
 * ```
 */
export function createEmbeddedRunBackend(options: EmbeddedRunBackendOptions): RunBackend {
  const runsDir = path.resolve(options.runsDir ?? DEFAULT_RUNS_DIR);
  const flowsDir = path.resolve(options.flowsDir);
  const ids = options.ids ?? randomIds;
  const allowFiles = options.allowFiles ?? [flowsDir];
  const summaries = new Map<string, CachedSummary>();
  /** Ends every follow when the backend closes. */
  const closed = new AbortController();
  /** Each log as last read by the scan, so an unchanged one is not read again. */
  const scanned = new Map<string, string>();
  let closing = false;

  const logPathOf = (traceId: string) => path.join(runsDir, `${traceId}${LOG_EXTENSION}`);

  /** The run's good events from its log, or `undefined` when it has no log (or none that begins a run). */
  const readLogged = async (traceId: string): Promise<readonly AgentEvent[] | undefined> => {
    if (!isValidTraceId(traceId)) return undefined;
    try {
      // Damaged records are left out by the reader; what is good is shown.
      const { events } = await readJsonlLog(logPathOf(traceId));
      return events[0]?.type === AgentEventType.RunStarted ? events : undefined;
    } catch (thrown) {
      if (thrown instanceof RedflowError && thrown.code === ErrorCode.LOG_NOT_FOUND) return undefined;
      throw thrown;
    }
  };

  const flowOfLog = (events: readonly AgentEvent[]): string | undefined => {
    const first = events[0];
    const flowPath = first?.type === AgentEventType.RunStarted ? first.data.flow?.path : undefined;
    if (flowPath !== undefined && isAgentId(flowPath)) return agentIdOfPath(flowsDir, flowPath);
    return flowPath === undefined ? undefined : flowIdOfPath(flowsDir, flowPath);
  };

  const responseOf = async (traceId: string): Promise<RunResponse | undefined> => {
    const run = host.live(traceId);
    const events = run?.events ?? (await readLogged(traceId));
    if (!events) return undefined;
    const flow = flowOfLog(events);
    return runResponse(events, { active: run !== undefined, ...(flow !== undefined && { flow }) });
  };

  /** A run's summary for a list; finished logs are summarised once and remembered. */
  const summaryOf = async (traceId: string, file: { mtimeMs: number; size: number }): Promise<RunSummary | undefined> => {
    if (host.live(traceId) !== undefined) {
      const response = await responseOf(traceId);
      return response && runSummary(response);
    }
    const cached = summaries.get(traceId);
    if (cached && cached.mtimeMs === file.mtimeMs && cached.size === file.size) return cached.summary;
    const response = await responseOf(traceId);
    if (!response) return undefined;
    const summary = runSummary(response);
    if (summary.status === 'finished') {
      if (summaries.size >= SUMMARY_CACHE_SIZE) summaries.delete(summaries.keys().next().value as string);
      summaries.set(traceId, { ...file, summary });
    }
    return summary;
  };

  /** Resumes a parked run from its log with its answer: under way here again until it ends or waits. */
  const resumeWithAnswer = async ({ traceId, events, answer }: AnsweredRun): Promise<void> => {
    const first = events[0];
    const agentPath = first?.type === AgentEventType.RunStarted && first.data.flow?.path !== undefined && isAgentId(first.data.flow.path) ? first.data.flow.path : undefined;
    await host.launch(
      traceId,
      async ({ signal, record, showChunk }) => {
        // An `.agent.md` agent's run goes on as its definition does, not as a flow file.
        if (agentPath !== undefined) {
          const { resumeAgentFile } = await import('./agentFileRun.js');
          return resumeAgentFile({ agentPath, logPath: logPathOf(traceId), answer, signal, onEvent: record, ...(options.env !== undefined && { env: options.env }), ...(options.fsync !== undefined && { fsync: options.fsync }) });
        }
        const inspect = options.inspector?.(traceId);
        const embedded = await resumeFromLog({
          logPath: logPathOf(traceId),
          answer,
          signal,
          allowFiles,
          ...(options.env !== undefined && { env: options.env }),
          ...(options.fsync !== undefined && { fsync: options.fsync }),
          ...(inspect !== undefined && { inspect }),
          onEvent: record,
          onChunk: showChunk,
        });
        return { handle: embedded.handle, finished: embedded.finished() };
      },
      events,
    );
  };

  /** Answers parked runs and ends their waits at their deadlines (the one implementation, in the run host). */
  const host = new RunHost({
    read: readLogged,
    resume: resumeWithAnswer,
    closedError: () => new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'the server is shutting down and resumes no run')),
    busyHint: (traceId) => `GET /api/runs/${traceId} shows what the run waits for once it is parked again`,
    expiredHint: "answer before the wait's deadline (GET /api/runs/<traceId> shows it), or raise the agent's waitTimeoutMs",
    onExpireError: (traceId, error) => options.onRunError?.(traceId, error),
    ...(options.onRunError !== undefined && { onRunError: options.onRunError }),
    // Waits end on the sweeper's beat, as they always have here.
    tickMs: options.sweepMs ?? 1000,
    ...(options.sweepMs !== undefined && { retryMs: options.sweepMs }),
  });

  /** Reads the runs folder for runs that wait (parked here before a restart, or by another process). */
  const scanWaits = async (): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(runsDir);
    } catch {
      return;
    }
    for (const name of names) {
      if (closing) return;
      const traceId = name.slice(0, -LOG_EXTENSION.length);
      if (!name.endsWith(LOG_EXTENSION) || !isValidTraceId(traceId) || host.live(traceId) !== undefined) continue;
      const stats = await stat(path.join(runsDir, name)).catch(() => undefined);
      const version = stats ? `${stats.mtimeMs}:${stats.size}` : '';
      if (!stats || scanned.get(traceId) === version) continue;
      scanned.set(traceId, version);
      const events = await readLogged(traceId).catch(() => undefined);
      const wait = events && pendingWait(events);
      if (wait) host.park(traceId, Date.parse(wait.deadline));
      else host.unpark(traceId);
    }
  };

  const answerWait = (traceId: string, answer: WaitAnswer): Promise<'answered' | 'unknown'> => host.answer(traceId, answer);

  const rescan = setInterval(() => void scanWaits().catch(() => undefined), options.rescanMs ?? 60_000);
  rescan.unref();
  void scanWaits().catch(() => undefined);

  return {
    mode: 'embedded',

    async start(request) {
      if (closing) throw new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'the server is shutting down and starts no new run'));
      const traceId = request.traceId ?? ids.traceId();
      if (request.traceId !== undefined && (!isValidTraceId(traceId) || host.live(traceId) !== undefined || (await readLogged(traceId)) !== undefined)) {
        throw new RedflowError(errorInfo(ErrorCode.RUN_TRACE_ID_TAKEN, `a run ${JSON.stringify(traceId.slice(0, 130))} exists already, or the id cannot name one`, { hint: 'start the run with a new id' }));
      }
      const run = await host.launch(traceId, async ({ signal, record, showChunk }) => {
        const inspect = options.inspector?.(traceId);
        const embedded = await runFlowFile({
          flowPath: request.flowPath,
          input: request.input,
          traceId,
          logPath: logPathOf(traceId),
          signal,
          ...(request.conversationId !== undefined && { conversationId: request.conversationId }),
          ...(request.timeoutMs !== undefined && { timeoutMs: request.timeoutMs }),
          ...(options.env !== undefined && { env: options.env }),
          ...(options.fsync !== undefined && { fsync: options.fsync }),
          allowFiles,
          ...(inspect !== undefined && { inspect }),
          onEvent: record,
          onChunk: showChunk,
        });
        return { handle: embedded.handle, finished: embedded.finished() };
      });
      // Answered once the run's first event is in its log (or it has ended without one).
      await run.changed(0, Number.POSITIVE_INFINITY);
      if (run.events.length === 0) {
        throw new RedflowError(errorInfo(ErrorCode.HTTP_INTERNAL_ERROR, `run ${traceId} ended before recording its start`));
      }
      return { traceId };
    },

    async startAgent(request) {
      if (closing) throw new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'the server is shutting down and starts no new run'));
      const traceId = ids.traceId();
      const run = await host.launch(traceId, async ({ signal, record }) => {
        // Loaded on the first agent run: a server of flows only never loads the executor.
        const { runAgentFile } = await import('./agentFileRun.js');
        return runAgentFile({ ...request, traceId, logPath: logPathOf(traceId), signal, onEvent: record, ...(options.env !== undefined && { env: options.env }), ...(options.fsync !== undefined && { fsync: options.fsync }) });
      });
      await run.changed(0, Number.POSITIVE_INFINITY);
      if (run.events.length === 0) throw new RedflowError(errorInfo(ErrorCode.HTTP_INTERNAL_ERROR, `run ${traceId} ended before recording its start`));
      return { traceId };
    },

    async fork(request) {
      if (closing) throw new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'the server is shutting down and starts no new run'));
      if (host.live(request.parent) === undefined && (await readLogged(request.parent)) === undefined) return undefined;
      // A run under way here could still change the prefix the fork would copy (one whose last
      // event is in is only closing its log).
      const live = host.live(request.parent);
      if (live !== undefined && !live.ended) {
        throw new RedflowError(
          errorInfo(ErrorCode.FORK_RUN_STILL_RUNNING, `the run ${request.parent} is still running on this server`, {
            hint: 'wait for it to end (or park on a wait), or abort it, then fork it',
          }),
        );
      }
      const traceId = ids.traceId();
      const { parent, ...changes } = request;
      const run = await host.launch(traceId, async ({ signal, record, showChunk }) => {
        const inspect = options.inspector?.(traceId);
        // Loaded on the first fork: a server that forks nothing never loads it.
        const { forkRun } = await import('../host/forkRun.js');
        // The fork's log begins with the prefix forkRun writes, which its resumption does not
        // report: live events wait until that prefix is kept, so the run's events stay in order.
        let held: AgentEvent[] | undefined = [];
        const keep = (event: AgentEvent): void => (held === undefined ? record(event) : void held.push(event));
        const forked = await forkRun({
          ...changes,
          from: logPathOf(parent),
          runsDir,
          traceId,
          logPath: logPathOf(traceId),
          signal,
          allowFiles,
          ...(options.env !== undefined && { env: options.env }),
          ...(options.fsync !== undefined && { fsync: options.fsync }),
          ...(inspect !== undefined && { inspect }),
          onEvent: keep,
          onChunk: showChunk,
        });
        const written = await readJsonlLog(forked.logPath).catch(() => ({ events: [] as AgentEvent[] }));
        for (const event of [...written.events, ...held]) record(event);
        held = undefined;
        return { handle: forked.handle, finished: forked.finished() };
      });
      await run.changed(0, Number.POSITIVE_INFINITY);
      return { traceId };
    },

    get: responseOf,

    async events(traceId, afterSeq) {
      const events = host.live(traceId)?.events ?? (await readLogged(traceId));
      return events?.filter((event) => event.seq > afterSeq);
    },

    follow(traceId, afterSeq, followOptions = {}) {
      if (!isValidTraceId(traceId)) return unknownRun(traceId);
      // The log file, whoever writes it; the backend's close ends every follow.
      const signal = followOptions.signal === undefined ? closed.signal : AbortSignal.any([followOptions.signal, closed.signal]);
      return followJsonlLog(logPathOf(traceId), afterSeq, { traceId, signal, pollMs: options.sweepMs ?? 1000 });
    },

    followChunks(traceId, onChunk) {
      return host.live(traceId)?.followChunks(onChunk) ?? (() => undefined);
    },

    async list({ flow, limit }) {
      let names: string[];
      try {
        names = await readdir(runsDir);
      } catch {
        return [];
      }
      const files = await Promise.all(
        names
          .filter((name) => name.endsWith(LOG_EXTENSION) && isValidTraceId(name.slice(0, -LOG_EXTENSION.length)))
          .map(async (name) => {
            const stats = await stat(path.join(runsDir, name)).catch(() => undefined);
            return stats?.isFile() ? { traceId: name.slice(0, -LOG_EXTENSION.length), mtimeMs: stats.mtimeMs, size: stats.size } : undefined;
          }),
      );
      const newestFirst = files
        .filter((file) => file !== undefined)
        .sort((a, b) => b.mtimeMs - a.mtimeMs || (a.traceId < b.traceId ? 1 : -1));
      const found: RunSummary[] = [];
      for (const file of newestFirst) {
        if (found.length >= limit) break;
        const summary = await summaryOf(file.traceId, file).catch(() => undefined);
        if (summary && (flow === undefined || summary.flow === flow)) found.push(summary);
      }
      return found;
    },

    abort: (traceId, reason): Promise<AbortAnswer> => host.abort(traceId, reason ?? 'aborted through the HTTP API'),

    answer: answerWait,

    async close() {
      closing = true;
      closed.abort();
      host.close();
      clearInterval(rescan);
      await host.endRuns({ abort: 'the server is shutting down' });
    },
  };
}

/** The follow of a trace id that cannot name a log file: no run, ever. */
async function* unknownRun(traceId: string): AsyncGenerator<AgentEvent> {
  throw new RedflowError(errorInfo(ErrorCode.RUN_NOT_FOUND, `no run ${JSON.stringify(traceId.slice(0, 130))}`, { hint: 'GET /api/runs lists the runs' }));
}
