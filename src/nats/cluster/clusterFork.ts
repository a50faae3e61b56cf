import path from 'node:path';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { AgentEnvelope, ForkParent, RunOutcome } from '../../contracts/schema-types.js';
import { DEFAULT_SUBJECT_PREFIX, Storage, checkSubjectPrefix } from '../../actors/subjects.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { isTerminal, type AgentEvent } from '../../events/eventTypes.js';
import { checkParentLog, planFork, type ForkPlanOptions } from '../../host/forkPlan.js';
import { readParentLog } from '../../host/forkRun.js';
import { randomIds } from '../../runtime/ids.js';
import { followJetStreamRun } from '../jetstream/followRun.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../jetstream/jetstreamEventStore.js';
import { followToEnd } from './remoteRun.js';
import { openRunLeases } from './runLeases.js';
import { requireCoreWorker } from './coreWorkerPresence.js';

/**
 * Options of {@link forkOnCluster}.
 *
 * @example
 * ```ts
 * const options: ClusterForkOptions = { nc, prefix: 'orders', from: '3f2a…', at: 2, prompt: 'Answer in one sentence.' };
 * ```
 */
export interface ClusterForkOptions extends ForkPlanOptions {
  readonly nc: NatsConnection;
  readonly prefix?: string;
  /** The parent: a run's trace id in the trace stream of `prefix`, or `{ log }`: a run's JSONL log file. */
  readonly from: string | { readonly log: string };
  /** The fork's run timeout in ms (default: the core worker's), kept by a worker that takes it over. */
  readonly timeoutMs?: number;
  /** Called with each event the fork adds after its prefix, as it is stored, in order, each once. */
  readonly onEvent?: (event: AgentEvent) => void;
  /** Stops following once aborted; the fork goes on on the cluster. */
  readonly signal?: AbortSignal;
}

/**
 * A fork under way on the cluster.
 *
 * @example
 * ```ts
 * const fork: ClusterFork = await forkOnCluster({ nc, from: traceId, at: 2 });
 * console.log(fork.traceId, (await fork.result).outcome.status);
 * ```
 */
export interface ClusterFork {
  readonly traceId: string;
  /** The run it was forked from (its trace id, and its log file when it was one). */
  readonly parent: ForkParent;
  /** Resolves with the outcome and the envelope (the fold of the fork's stored log) once it ends. */
  readonly result: Promise<{ readonly outcome: RunOutcome; readonly envelope: AgentEnvelope }>;
  /** Stops following; the fork goes on on the cluster. */
  detach(): void;
}

/**
 * Forks a run as a cluster run: the fork's log (its `run.started`, `run.forked`, then the parent's
 * prefix, checked under the fork's flow exactly as `forkRun` checks it) is appended to the trace
 * stream, and the fork gets a run record whose owner is gone, so the first core worker's takeover
 * scan claims it and resumes it from its log, as it resumes the run of a worker that died. From
 * there it is a run like any other on the cluster: a core worker killed mid-fork leaves it to
 * another, `redflow tail/replay --nats` show it, and its `run.forked` names its parent for
 * `replay --tree`. Scripted answers and tool results apply on the core worker; the model's
 * settings (`model`) and a scripted model (`script`) are the model workers', and are refused.
 *
 * A parent in the stream that has not ended while the cluster holds a record of it under way is
 * refused (`FORK_RUN_STILL_RUNNING`); one parked on a wait, or one that ended, can be forked.
 *
 * @throws RedflowError `LOG_NOT_FOUND`; the log's damage code; `FORK_RUN_STILL_RUNNING`;
 *   `FORK_POINT_OUT_OF_RANGE`; `FORK_PREFIX_INCOMPATIBLE`; `CLI_USAGE` for `model` or `script`;
 *   `LOG_STORE_UNAVAILABLE` when the stream or the run buckets cannot be reached;
 *   `TRANSPORT_NO_RESPONDER` when no core worker runs for the prefix (nothing is stored).
 *
 * @example
 * ```ts
 * const fork = await forkOnCluster({ nc, prefix: 'orders', from: traceId, at: 2, answers: { 2: 'done' } });
 * const { outcome } = await fork.result;
 * ```
 */
export async function forkOnCluster(options: ClusterForkOptions): Promise<ClusterFork> {
  const prefix = options.prefix ?? DEFAULT_SUBJECT_PREFIX;
  checkSubjectPrefix(prefix);
  for (const [name, given] of [['model', options.model], ['script', options.script]] as const) {
    if (given !== undefined) {
      throw new RedflowError(
        errorInfo(ErrorCode.CLI_USAGE, `a fork on a cluster cannot change the ${name === 'model' ? "model's settings" : 'model to a script'}: the model workers run their flow's model`, {
          hint: 'give the answers that change with --answer <n>=<json>, or fork the run on this machine (without --nats)',
        }),
      );
    }
  }
  const store = await openJetStreamEventStore(options.nc, { prefix });
  try {
    const { parent, ref } = await readParent(options.nc, store, prefix, options.from);
    const plan = await planFork(parent, ref, { ...options, traceId: options.traceId ?? randomIds.traceId() });
    const { traceId } = plan;
    const detached = new AbortController();
    const following = options.signal === undefined ? detached.signal : AbortSignal.any([detached.signal, options.signal]);
    // The prefix is the parent's, shown by its own replay: only what the fork adds is told.
    const told = plan.events.length;
    const onEvent = options.onEvent === undefined ? undefined : (event: AgentEvent) => (event.seq > told ? options.onEvent?.(event) : undefined);
    const result = followToEnd(followJetStreamRun(options.nc, Storage.traceStream(prefix), prefix, traceId, 0, { signal: following }), traceId, following, onEvent);
    try {
      // Stored with no core worker to take it over, the fork would wait forever: refused first, as `redflow run --nats` is.
      await requireCoreWorker(options.nc, prefix);
      await storeForkLog(store, plan.events);
      await handOver(options.nc, prefix, traceId, options.timeoutMs);
    } catch (error) {
      detached.abort();
      throw error;
    }
    return { traceId, parent: ref, result, detach: () => detached.abort() };
  } finally {
    await store.close();
  }
}

/** The fork's start, then its run.forked on a subject of its own (forks are found by it, see listRunForks), then the prefix. */
async function storeForkLog(store: JetStreamEventStore, events: readonly AgentEvent[]): Promise<void> {
  const [started, forked, ...prefixEvents] = events as [AgentEvent, AgentEvent, ...AgentEvent[]];
  await store.append(started);
  await store.append(forked);
  if (store.appendMany !== undefined) await store.appendMany(prefixEvents);
  else for (const event of prefixEvents) await store.append(event);
}

/** The parent's events and how the fork names it: a log file read as `forkRun` reads it, or a run in the stream. */
async function readParent(nc: NatsConnection, store: JetStreamEventStore, prefix: string, from: ClusterForkOptions['from']): Promise<{ parent: readonly AgentEvent[]; ref: ForkParent }> {
  if (typeof from !== 'string') {
    const log = path.resolve(from.log);
    const parent = await readParentLog(log);
    return { parent, ref: { traceId: (parent[0] as AgentEvent).traceId, log } };
  }
  const parent = checkParentLog(await store.read(from), `run ${from} in ${Storage.traceStream(prefix)}`);
  const last = parent[parent.length - 1];
  if (last !== undefined && !isTerminal(last) && (await underWay(nc, prefix, from))) {
    throw new RedflowError(
      errorInfo(ErrorCode.FORK_RUN_STILL_RUNNING, `the run ${from} is still running: a core worker of prefix "${prefix}" holds it`, {
        hint: 'wait for it to end (or park on a wait), or abort it (POST /api/runs/<traceId>/abort on redflow serve --nats), then fork it',
      }),
    );
  }
  return { parent, ref: { traceId: from } };
}

/** True when the cluster holds a record of the run under way (not parked on a wait). */
async function underWay(nc: NatsConnection, prefix: string, traceId: string): Promise<boolean> {
  const runs = await new Kvm(nc).open(Storage.runsBucket(prefix)).catch(() => undefined);
  const entry = await runs?.get(traceId).catch(() => null);
  if (entry === undefined || entry === null || entry.operation !== 'PUT') return false;
  try {
    return entry.json<{ waiting?: unknown }>().waiting === undefined;
  } catch {
    return false;
  }
}

/**
 * Gives the stored fork to the core workers: a record of it under an owner that says goodbye at
 * once (its heartbeat deleted), which makes it an orphan the next takeover scan claims.
 */
async function handOver(nc: NatsConnection, prefix: string, traceId: string, timeoutMs: number | undefined): Promise<void> {
  const leases = await openRunLeases(nc, { prefix, owner: `fork-${traceId}`, leaseMs: 3000 });
  try {
    const registered = await leases.register({ traceId, startedAt: new Date().toISOString(), ...(timeoutMs !== undefined && { timeoutMs }) });
    if (!registered) throw new RedflowError(errorInfo(ErrorCode.RUN_TRACE_ID_TAKEN, `trace id ${traceId} is taken by another run`, { hint: 'fork with a new trace id (or none: one is made up)' }));
  } finally {
    await leases.close();
  }
}
