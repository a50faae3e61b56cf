import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { DEFAULT_SUBJECT_PREFIX, Storage } from '../../actors/subjects.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import type { ReadResult } from '../../events/eventStore.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../../events/eventTypes.js';
import { startRemoteRun } from '../cluster/remoteRun.js';
import { MAX_ABORT_REASON_LENGTH, requestRunAbort } from '../cluster/runAborts.js';
import { requestRunAnswer } from '../cluster/runAnswers.js';
import { pendingWait } from '../../events/pendingWait.js';
import { clusterRunLogs, findRunPrefix } from '../cluster/subagentRunPrefix.js';
import { isValidTraceId, randomIds } from '../../runtime/ids.js';
import type { RunResponse, RunSummary } from '../../server/apiTypes.js';
import { cachedFlowIdIndex } from './natsFlowIds.js';
import { followRunChunks } from '../cluster/runChunks.js';
import { listRunStarts, type RunStartedEvent } from './natsRunList.js';
import { clusterRunResponse } from './natsRunSummary.js';
import type { AbortAnswer, InspectorFactory, RunBackend } from '../../server/runBackend.js';

/** Options of {@link createNatsRunBackend}. */
export interface NatsRunBackendOptions {
  /** The caller's connection: the backend never closes it. */
  readonly nc: NatsConnection;
  /** The cluster's subject prefix (default `redflow`). */
  readonly prefix?: string;
  /** The server's flows directory: runs are named by their flow's path in it. */
  readonly flowsDir: string;
  /**
   * Ignored: on a cluster the statechart runs in a core worker, not in this process, so there is
   * no actor here for the Stately inspector to watch. (A run's log can still be replayed.)
   */
  readonly inspector?: InspectorFactory;
  /** How long a start waits for a core worker to take the run and store its first event (default 10 s). */
  readonly startTimeoutMs?: number;
  /**
   * How long an abort keeps asking when no core worker answers for a run that has not ended
   * (its owner died and another is taking it over, which takes about a lease). Default 6 s.
   */
  readonly abortPatienceMs?: number;
}

/** Runs started here, remembered with their flows-directory id (the log only has the flow file's own id). */
const MAX_REMEMBERED_STARTS = 1000;
/** Logs read at once when listing runs. */
const LIST_READ_CONCURRENCY = 8;

/**
 * The `redflow serve --nats` backend: runs flows on a NATS cluster of workers
 * (`redflow worker … --role core` and the model/tool workers).
 *
 * - **start** asks the core workers (`startRemoteRun`) with the flow file's `id` (or the
 *   flows-directory id when the file has none); workers hosting another flow refuse it with
 *   `FLOW_MISMATCH`, which is thrown as is. It resolves once the run's `run.started` is stored.
 * - **get / events** read the run's log from the stream `<PREFIX>_TRACE` and fold it.
 * - **follow** is the trace stream's `follow`: an ordered consumer over the run's subjects gives
 *   its stored events, then each one as it is stored, each once and in order.
 * - **list** reads the newest `run.started` events of the stream, backwards in windows, then each
 *   run's log (see `natsRunList.ts`); a run is `running` while the runs bucket holds its record.
 * - **fork** stores the fork's log in the stream and hands it to the core workers (`forkOnCluster`).
 * - **abort** asks on `<prefix>.runs.abort.<traceId>`: only the core worker that owns the run
 *   answers (see `nats/cluster/runAborts.ts`).
 * - **answer** asks on `<prefix>.runs.answer.<traceId>`: one core worker takes the answer to a
 *   parked run and resumes it (see `nats/cluster/runAnswers.ts`); its refusals are thrown as they
 *   come (`RUN_NOT_WAITING`, `WAIT_ALREADY_ANSWERED`, …).
 *
 * The connection needs the rights of deploy/nats/redflow.conf's `client` user.
 *
 * @example
 * ```ts
 * const backend = await createNatsRunBackend({ nc, prefix: 'redflow', flowsDir: 'flows' });
 * const { traceId } = await backend.start({ flowId: 'order-status', flowPath, flow, input: 'Where is A-1001?' });
 * ```
 */
export async function createNatsRunBackend(options: NatsRunBackendOptions): Promise<RunBackend> {
  const { nc } = options;
  const prefix = options.prefix ?? DEFAULT_SUBJECT_PREFIX;
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  const abortPatienceMs = options.abortPatienceMs ?? 6000;
  // This process never appends: the stores are only read. A subagent's runs are in the stream of
  // its own prefix, below its caller's: each run's prefix is found once (findRunPrefix) and kept.
  const logs = clusterRunLogs(nc);
  await logs.storeOf(prefix);
  const prefixes = new Map<string, string>();
  /** The prefix whose stream holds run `traceId`, or undefined while none does. */
  const prefixOf = async (traceId: string): Promise<string | undefined> => {
    const kept = prefixes.get(traceId);
    if (kept !== undefined || !isValidTraceId(traceId)) return kept;
    const found = await findRunPrefix(traceId, prefix, logs);
    if (found !== undefined) {
      prefixes.set(traceId, found);
      if (prefixes.size > MAX_REMEMBERED_STARTS) prefixes.delete(prefixes.keys().next().value as string);
    }
    return found;
  };
  const flowIds = cachedFlowIdIndex(options.flowsDir);
  const startedHere = new Map<string, string>();
  /** Ends every follow when the backend closes. */
  const closed = new AbortController();
  // Bound without a request; `get` tells whether the bucket exists. One per prefix runs are found on.
  const runsBuckets = new Map<string, Promise<KV>>();
  const runsBucketOf = (on: string): Promise<KV> => {
    let bucket = runsBuckets.get(on);
    if (bucket === undefined) runsBuckets.set(on, (bucket = new Kvm(nc).open(Storage.runsBucket(on))));
    return bucket;
  };

  /** The run's stored log, or `undefined` for a trace id no stream has seen (no wait for an unknown run). */
  const readLog = async (traceId: string): Promise<ReadResult | undefined> => {
    const on = await prefixOf(traceId);
    if (on === undefined) return undefined;
    try {
      return await (await logs.storeOf(on)).read(traceId);
    } catch (error) {
      if (error instanceof RedflowError && error.code === ErrorCode.LOG_NOT_FOUND) return undefined;
      throw error;
    }
  };

  /**
   * True while the runs bucket holds the run's record and the run is not parked in a wait: a core
   * worker owns it, or will take it over.
   */
  const underWay = async (traceId: string): Promise<boolean> => {
    try {
      const entry = await (await runsBucketOf((await prefixOf(traceId)) ?? prefix)).get(traceId);
      if (entry === null || entry.operation !== 'PUT') return false;
      try {
        return entry.json<{ waiting?: unknown }>().waiting === undefined;
      } catch {
        return true;
      }
    } catch (error) {
      // No bucket yet: no core worker has ever run under this prefix, so none owns the run.
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return false;
      throw error;
    }
  };

  /** The run's flows-directory id: as started here, else from the flow file id its log names. */
  const flowOf = async (started: AgentEvent): Promise<string | undefined> => {
    const here = startedHere.get(started.traceId);
    if (here !== undefined) return here;
    const definitionId = started.type === AgentEventType.RunStarted ? started.data.flow?.id : undefined;
    return definitionId === undefined ? undefined : (await flowIds()).directoryIdOf(definitionId);
  };

  const responseOf = async (read: readonly AgentEvent[]): Promise<RunResponse> => {
    let events = read;
    const first = events[0];
    const last = events[events.length - 1];
    if (!first || !last) {
      throw new RedflowError(errorInfo(ErrorCode.LOG_EMPTY, 'the run has no readable event', { hint: 'its first record is damaged' }));
    }
    const running = !isTerminal(last) && (await underWay(last.traceId));
    if (!isTerminal(last) && !running) {
      // The core worker deletes the run's record once its last event is stored: a run that ended
      // between the log's read and the bucket's has that event now (it is not interrupted).
      const again = await readLog(last.traceId);
      if (again && again.events.length > events.length) events = again.events;
    }
    const flow = await flowOf(first);
    return clusterRunResponse(events, {
      underWay: running,
      ...(flow !== undefined && { flow }),
    });
  };

  const remember = (traceId: string, flowId: string) => {
    startedHere.set(traceId, flowId);
    if (startedHere.size > MAX_REMEMBERED_STARTS) startedHere.delete(startedHere.keys().next().value as string);
  };

  return {
    mode: 'nats',

    async start(request) {
      // A trace id already taken is refused by the core workers before anything is recorded.
      const traceId = request.traceId ?? randomIds.traceId();
      let firstStored: () => void = () => undefined;
      const stored = new Promise<void>((resolve) => (firstStored = resolve));
      const remote = await startRemoteRun({
        nc,
        prefix,
        input: request.input,
        traceId,
        flowId: request.flow.id ?? request.flowId,
        startTimeoutMs,
        onEvent: () => firstStored(),
        ...(request.conversationId !== undefined && { conversationId: request.conversationId }),
        ...(request.timeoutMs !== undefined && { timeoutMs: request.timeoutMs }),
      });
      try {
        // A core worker took the run; its first event follows once stored (or was missed live:
        // then the log says).
        let timer: ReturnType<typeof setTimeout> | undefined;
        const seen = await Promise.race([
          stored.then(() => true),
          new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), startTimeoutMs))),
        ]);
        clearTimeout(timer);
        if (!seen && !(await readLog(traceId))) {
          throw new RedflowError(
            errorInfo(ErrorCode.LOG_NOT_FOUND, `a core worker took run ${traceId}, but its first event is not in the log after ${startTimeoutMs} ms`, {
              hint: `the run may still start: look for it with GET /api/runs/${traceId}`,
              retryable: true,
            }),
          );
        }
      } finally {
        remote.detach();
      }
      remember(traceId, request.flowId);
      return { traceId };
    },

    async fork(request) {
      const on = await prefixOf(request.parent);
      const first = on === undefined ? undefined : (await readLog(request.parent))?.events[0];
      if (on === undefined || first === undefined) return undefined;
      const { parent, ...changes } = request;
      // The flow of the run as this server knows it: its file in the flows directory, when the
      // path the core worker recorded is not one here.
      const directoryId = await flowOf(first);
      const recorded = first.type === AgentEventType.RunStarted ? first.data.flow?.path : undefined;
      const here = recorded !== undefined && (await stat(recorded).then((found) => found.isFile(), () => false));
      const flow = here || directoryId === undefined ? undefined : path.join(options.flowsDir, `${directoryId}.json`);
      // Loaded on the first fork: a server that forks nothing never loads it.
      const { forkOnCluster } = await import('../cluster/clusterFork.js');
      const fork = await forkOnCluster({ ...changes, nc, prefix: on, from: parent, ...(flow !== undefined && { flow }) });
      // Stored and handed to the core workers: it goes on there, followed like any run.
      fork.detach();
      if (directoryId !== undefined) remember(fork.traceId, directoryId);
      return { traceId: fork.traceId };
    },

    async get(traceId) {
      const log = await readLog(traceId);
      return log === undefined ? undefined : responseOf(log.events);
    },

    async events(traceId, afterSeq) {
      const log = await readLog(traceId);
      return log?.events.filter((event) => event.seq > afterSeq);
    },

    follow(traceId, afterSeq, followOptions = {}) {
      const signal = followOptions.signal === undefined ? closed.signal : AbortSignal.any([followOptions.signal, closed.signal]);
      // A run not in any stream yet is waited for on this backend's own prefix.
      return (async function* () {
        yield* (await logs.storeOf((await prefixOf(traceId)) ?? prefix)).follow(traceId, afterSeq, { signal });
      })();
    },

    followChunks(traceId, onChunk) {
      if (!isValidTraceId(traceId)) return () => undefined;
      let stop: (() => void) | undefined;
      let stopped = false;
      void prefixOf(traceId).then(
        (on) => {
          if (!stopped) stop = followRunChunks(nc, on ?? prefix, traceId, onChunk);
        },
        () => undefined,
      );
      return () => {
        stopped = true;
        stop?.();
      };
    },

    async list({ flow, limit }) {
      let accept: ((started: RunStartedEvent) => boolean) | undefined;
      if (flow !== undefined) {
        // The filter names a file of the flows directory; the log names the flow by the id inside it.
        const wanted = (await flowIds()).definitionIdOf(flow) ?? flow;
        accept = (started) => startedHere.get(started.traceId) === flow || started.data.flow?.id === wanted;
      }
      const starts = await listRunStarts(nc, { prefix, limit, ...(accept && { accept }) });
      const summaries: (RunSummary | undefined)[] = new Array<RunSummary | undefined>(starts.length);
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < starts.length; i = next++) {
          const log = await readLog((starts[i] as RunStartedEvent).traceId);
          if (!log || log.events.length === 0) continue;
          const { envelope: _envelope, ...summary } = await responseOf(log.events);
          summaries[i] = summary;
        }
      };
      await Promise.all(Array.from({ length: Math.min(LIST_READ_CONCURRENCY, starts.length) }, worker));
      return summaries.filter((summary): summary is RunSummary => summary !== undefined);
    },

    async abort(traceId, reason): Promise<AbortAnswer> {
      if (reason !== undefined && reason.length > MAX_ABORT_REASON_LENGTH) {
        throw new RedflowError(errorInfo(ErrorCode.HTTP_BODY_INVALID, `the abort reason is longer than ${MAX_ABORT_REASON_LENGTH} characters`));
      }
      const deadline = Date.now() + abortPatienceMs;
      for (;;) {
        const log = await readLog(traceId);
        if (!log) return 'unknown';
        const last = log.events[log.events.length - 1];
        if (last && isTerminal(last)) return 'finished';
        if (Date.now() >= deadline) {
          throw new RedflowError(
            errorInfo(ErrorCode.TRANSPORT_NO_RESPONDER, `no core worker owns run ${traceId} right now`, {
              hint: 'is a core worker running? One takes the run over within its lease; then abort again',
              retryable: true,
            }),
          );
        }
        // A parked run is held by no worker to hear its abort subject: one core worker takes the abort as an answer.
        const on = (await prefixOf(traceId)) ?? prefix;
        if (pendingWait(log.events) !== undefined && !(await underWay(traceId))) {
          await requestRunAnswer(nc, on, traceId, { kind: 'abort', reason: reason ?? 'aborted through the HTTP API' });
          return 'aborting';
        }
        const answer = await requestRunAbort(nc, on, traceId, reason === undefined ? {} : { reason }, Math.max(100, Math.min(2000, deadline - Date.now())));
        if (answer.kind === 'aborting') return 'aborting';
        // Nobody owns it this moment: it has just ended, or is between owners. Look again.
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },

    async answer(traceId, answer) {
      if (answer.kind === 'expire') throw new RedflowError(errorInfo(ErrorCode.HTTP_BODY_INVALID, "a wait expires by itself, on the core workers"));
      if (!(await readLog(traceId))) return 'unknown';
      await requestRunAnswer(nc, (await prefixOf(traceId)) ?? prefix, traceId, answer);
      return 'answered';
    },

    async close() {
      closed.abort();
      await logs.close();
    },
  };
}
