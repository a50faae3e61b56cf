import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { JsonlFsyncMode } from '../events/jsonlEventStore.js';
import { readJsonlLog } from '../events/jsonlEventStore.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { DEFAULT_RUNS_DIR, runFlowFile } from '../runtime/embeddedFlowRun.js';
import { isValidTraceId, randomIds, type IdSource } from '../runtime/ids.js';
import type { RunHandle } from '../runtime/runAgent.js';
import type { RunResponse, RunSummary } from './apiTypes.js';
import { flowIdOfPath } from './flowIds.js';
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
}

/** A run under way in this process. */
interface ActiveRun {
  readonly traceId: string;
  readonly flowId: string;
  /** Every event so far, in seq order: followers catch up from here, never from the file. */
  readonly events: AgentEvent[];
  readonly followers: Set<(event: AgentEvent) => void>;
  /** Aborts a run whose handle does not exist yet (an abort while it starts). */
  readonly controller: AbortController;
  handle: RunHandle | undefined;
  /** True once the terminal event is in: nothing more will come. */
  ended: boolean;
  /** Settles once the run is over and its log closed, or its start failed. */
  readonly settled: Promise<void>;
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
 * logs. A log without a terminal event that is not under way here is `interrupted`.
 *
 * Following a run has no gap and no repeat: the events are recorded and handed to followers
 * synchronously, in the run's own `onEvent` callback, and a new follower catches up from the
 * in-memory list and subscribes in the same synchronous step, so no event can slip between the two.
 *
 * @example
 * ```ts
 * const backend = createEmbeddedRunBackend({ flowsDir: 'flows' });
 * const { traceId } = await backend.start({ flowId: 'demo', flowPath: '/abs/flows/demo.json', flow, input: 'hi' });
 * await backend.follow(traceId, 0, (event) => console.log(event.seq, event.type));
 * ```
 */
export function createEmbeddedRunBackend(options: EmbeddedRunBackendOptions): RunBackend {
  const runsDir = path.resolve(options.runsDir ?? DEFAULT_RUNS_DIR);
  const flowsDir = path.resolve(options.flowsDir);
  const ids = options.ids ?? randomIds;
  const active = new Map<string, ActiveRun>();
  const summaries = new Map<string, CachedSummary>();
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
    return flowPath === undefined ? undefined : flowIdOfPath(flowsDir, flowPath);
  };

  const responseOf = async (traceId: string): Promise<RunResponse | undefined> => {
    const run = active.get(traceId);
    if (run) return runResponse(run.events, { active: true, flow: run.flowId });
    const events = await readLogged(traceId);
    if (!events) return undefined;
    const flow = flowOfLog(events);
    return runResponse(events, { active: false, ...(flow !== undefined && { flow }) });
  };

  /** A run's summary for a list; finished logs are summarised once and remembered. */
  const summaryOf = async (traceId: string, file: { mtimeMs: number; size: number }): Promise<RunSummary | undefined> => {
    if (active.has(traceId)) {
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

  const abortRun = (run: ActiveRun, reason: string): void => {
    if (run.handle) run.handle.abort(reason);
    else run.controller.abort(reason);
  };

  return {
    mode: 'embedded',

    async start(request) {
      if (closing) throw new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'the server is shutting down and starts no new run'));
      const traceId = ids.traceId();
      let firstEvent!: () => void;
      const first = new Promise<void>((resolve) => (firstEvent = resolve));
      let settle!: () => void;
      const run: ActiveRun = {
        traceId,
        flowId: request.flowId,
        events: [],
        followers: new Set(),
        controller: new AbortController(),
        handle: undefined,
        ended: false,
        settled: new Promise<void>((resolve) => (settle = resolve)),
      };
      // Known before its first event is written, so a follower arriving early finds it here.
      active.set(traceId, run);
      let finished: Promise<unknown>;
      try {
        const inspect = options.inspector?.(traceId);
        const embedded = await runFlowFile({
          flowPath: request.flowPath,
          input: request.input,
          traceId,
          logPath: logPathOf(traceId),
          signal: run.controller.signal,
          ...(request.conversationId !== undefined && { conversationId: request.conversationId }),
          ...(request.timeoutMs !== undefined && { timeoutMs: request.timeoutMs }),
          ...(options.env !== undefined && { env: options.env }),
          ...(options.fsync !== undefined && { fsync: options.fsync }),
          allowFiles: options.allowFiles ?? [flowsDir],
          ...(inspect !== undefined && { inspect }),
          onEvent: (event) => {
            record(run, event);
            firstEvent();
          },
        });
        run.handle = embedded.handle;
        finished = embedded.finished();
      } catch (thrown) {
        active.delete(traceId);
        settle();
        throw thrown;
      }
      finished
        .catch((error: unknown) => {
          try {
            options.onRunError?.(traceId, error);
          } catch {
            // Reporting must not leave the run's bookkeeping undone.
          }
        })
        .finally(() => {
          active.delete(traceId);
          run.followers.clear();
          settle();
        });
      await Promise.race([first, finished]);
      if (run.events.length === 0) {
        throw new RedflowError(errorInfo(ErrorCode.HTTP_INTERNAL_ERROR, `run ${traceId} ended before recording its start`));
      }
      return { traceId };
    },

    get: responseOf,

    async events(traceId, afterSeq) {
      const run = active.get(traceId);
      const events = run ? run.events : await readLogged(traceId);
      return events?.filter((event) => event.seq > afterSeq);
    },

    async follow(traceId, afterSeq, onEvent) {
      const run = active.get(traceId);
      if (run) {
        // Catch up and subscribe in one synchronous step: the run's onEvent cannot run in between.
        for (const event of run.events) if (event.seq > afterSeq) onEvent(event);
        if (run.ended) return () => undefined;
        const follower = (event: AgentEvent) => {
          if (event.seq > afterSeq) onEvent(event);
        };
        run.followers.add(follower);
        return () => void run.followers.delete(follower);
      }
      // Not under way here: its log is complete (a run leaves `active` only once its log is
      // closed), or it is another process's, which this server does not follow live.
      const events = await readLogged(traceId);
      if (!events) return undefined;
      for (const event of events) if (event.seq > afterSeq) onEvent(event);
      return () => undefined;
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

    async abort(traceId, reason): Promise<AbortAnswer> {
      const run = active.get(traceId);
      if (run) {
        if (run.ended) return 'finished';
        abortRun(run, reason ?? 'aborted through the HTTP API');
        return 'aborting';
      }
      return (await readLogged(traceId)) ? 'finished' : 'unknown';
    },

    async close() {
      closing = true;
      const runs = [...active.values()];
      for (const run of runs) if (!run.ended) abortRun(run, 'the server is shutting down');
      await Promise.all(runs.map((run) => run.settled));
    },
  };
}

/** Keeps a run's event and hands it to its followers, in the run's own onEvent call. */
function record(run: ActiveRun, event: AgentEvent): void {
  const last = run.events[run.events.length - 1];
  if (last !== undefined && event.seq <= last.seq) return;
  run.events.push(event);
  if (isTerminal(event)) run.ended = true;
  for (const follower of [...run.followers]) {
    try {
      follower(event);
    } catch {
      // A follower's failure (a closed socket) must never reach the run's recorder.
    }
  }
}
