import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { expect } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import { connectNats } from '../../src/nats/connect.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { uniquePrefix } from '../nats/natsSupport.js';
import { ROOT } from './clusterSupport.js';
import { checkRuns, repeatedExecutions, startLoad } from './faultLoad.js';
import type { ServerNetwork } from './netns.js';
import { allStreamsSettled, startNatsCluster, type NatsCluster } from './natsCluster.js';
import { killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// What the cluster fault suites share (clusterFaults and clusterPartitions): a real three-server
// NATS cluster (natsCluster.ts), the trace stream and every bucket with three replicas
// (REDFLOW_REPLICAS=3), two core workers, a model worker and a tool worker (real `redflow worker`
// processes, each given the servers in another order), and a steady load of runs while one fault
// at a time is injected. After each: every run whose start was acknowledged ends, every log
// replays whole (seqs 1..n, one ending, no problem), no run's ending is logged by two workers (no
// run owned by two), no tool call is executed twice, and the time to recover is reported.

/** The pace of the load and how long to wait around a fault. */
export interface FaultProfile {
  readonly everyMs: number;
  readonly inFlight: number;
  readonly warmupMs: number;
  readonly settleMs: number;
  readonly settleWithinMs: number;
}

/** What one fault did to the runs. */
export interface Figures {
  fault: string;
  acknowledged: number;
  refusedStarts: number;
  /** The codes the refused starts came back with. */
  refusedAs: string;
  unfinished: number;
  broken: number;
  takenOver: number;
  /** Runs whose ending two workers logged (`run <id> ended`): owned by two at once. */
  endedByTwo: number;
  repeatedToolCalls: number;
  recoveryMs: number | null;
  /** Partitions: when every client of the cut-off server was connected to another one (ms after the cut), null if not within the partition. */
  failoverMs?: number | null;
}

/** A cluster, its workers and a client, ready for faults. */
export interface FaultSuite {
  readonly cluster: NatsCluster;
  readonly client: NatsConnection;
  readonly prefix: string;
  /** The trace stream of the suite's prefix. */
  readonly stream: string;
  readonly figures: Figures[];
  /** The two core workers started first (a test replacing one updates this list). */
  coreWorkers: RedflowProcess[];
  /** Starts one more worker of `role`, given the servers rotated by `at`. */
  worker(role: string, at: number): Promise<RedflowProcess>;
  /** Runs the load, injects `fault` after a warm-up, and checks every acknowledged run. */
  underLoad(name: string, fault: () => Promise<void>): Promise<Figures>;
  /** Prints the figures, ends the workers and the cluster, removes the files. */
  close(): Promise<void>;
}

const flowPath = path.join(ROOT, 'test/fixtures/crash/flow.json');
/** Core workers: a short lease, so takeovers happen within the faults; tool workers keep the default tool-call lease (10 s). */
const CORE_LEASE = ['--lease', '1500', '--attempt-timeout', '3000'];
const RETRYABLE_REFUSALS: readonly string[] = [ErrorCode.TRANSPORT_TIMEOUT, ErrorCode.LOG_STORE_UNAVAILABLE, ErrorCode.TRANSPORT_NO_RESPONDER];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many of `traceIds` more than one worker logged as ended. */
function endedByTwo(processes: readonly RedflowProcess[], traceIds: readonly string[]): number {
  const endedBy = new Map<string, number>();
  for (const worker of processes) {
    const ended = new Set(Array.from(worker.stderr().matchAll(/ run (\S+) ended /g), (match) => match[1]!));
    for (const traceId of ended) endedBy.set(traceId, (endedBy.get(traceId) ?? 0) + 1);
  }
  return traceIds.filter((traceId) => (endedBy.get(traceId) ?? 0) > 1).length;
}

/**
 * Starts the cluster (in network namespaces when `network` is given), the store, two core
 * workers, a model worker and a tool worker, and resolves once every stream has settled.
 *
 * @example
 * ```ts
 * const suite = await startFaultSuite(profile);
 * const result = await suite.underLoad('kill -9', async () => suite.cluster.kill('n1'));
 * expectNothingLost(result);
 * ```
 */
export async function startFaultSuite(profile: FaultProfile, options: { network?: ServerNetwork } = {}): Promise<FaultSuite> {
  const dir = await mkdtemp(path.join(tmpdir(), 'redflow-faults-'));
  const prefix = uniquePrefix();
  const processes: RedflowProcess[] = [];
  const figures: Figures[] = [];
  const cluster = await startNatsCluster({ network: options.network });
  const client = await connectNats({ servers: cluster.urls.split(','), name: 'fault-suite-client' });
  // A cluster that has just formed may answer its first JetStream requests with 503 for a moment.
  let store: JetStreamEventStore | undefined;
  for (let tries = 0; store === undefined; tries++) {
    store = await openJetStreamEventStore(client, { prefix, replicas: 3 }).catch(async (error: unknown) => {
      if (tries > 50) throw error;
      await sleep(200);
      return undefined;
    });
  }
  const opened = store;
  /** The servers in another order for each worker: they attach to different servers and fail over. */
  const rotated = (by: number): string => {
    const urls = cluster.urls.split(',');
    return [...urls.slice(by % 3), ...urls.slice(0, by % 3)].join(',');
  };
  const worker = async (role: string, at: number): Promise<RedflowProcess> => {
    const started = startRedflow(['worker', flowPath, '--role', role, '--nats', rotated(at), '--prefix', prefix, ...(role === 'core' ? CORE_LEASE : [])], {
      REDFLOW_REPLICAS: '3',
      COUNTER_FILE: path.join(dir, 'effects.log'),
      BUMP_DELAY_MS: '250',
    });
    processes.push(started);
    await started.ready();
    return started;
  };
  const suite: FaultSuite = {
    cluster,
    client,
    prefix,
    stream: Storage.traceStream(prefix),
    figures,
    coreWorkers: [],
    worker,
    async underLoad(name, fault) {
      const repeatedBefore = (await repeatedExecutions(path.join(dir, 'effects.log'))).length;
      const load = startLoad(client, prefix, name.replace(/[^a-z0-9]+/gi, '-'), profile);
      await sleep(profile.warmupMs);
      const injectedAt = Date.now();
      await fault();
      await allStreamsSettled(client, profile.settleWithinMs);
      await sleep(profile.settleMs);
      await load.stop();
      const after = load.acknowledged.filter((run) => run.sentAt >= injectedAt).map((run) => run.ackAt - injectedAt);
      const check = await checkRuns(opened, load.acknowledged.map((run) => run.traceId), 60_000);
      const result: Figures = {
        fault: name,
        acknowledged: load.acknowledged.length,
        refusedStarts: load.refused.length,
        refusedAs: [...new Set(load.refused.map((refusal) => refusal.code))].sort().join(' '),
        unfinished: check.unfinished.length,
        broken: check.broken.length,
        takenOver: check.resumed,
        endedByTwo: endedByTwo(processes, load.acknowledged.map((run) => run.traceId)),
        repeatedToolCalls: (await repeatedExecutions(path.join(dir, 'effects.log'))).length - repeatedBefore,
        recoveryMs: after.length > 0 ? Math.min(...after) : null,
      };
      figures.push(result);
      if (check.unfinished.length + check.broken.length > 0) {
        console.log(`${name}: unfinished ${check.unfinished.join(' ')}; broken ${check.broken.join(' ')}`);
        // What the stream and the workers say of the first few, to diagnose.
        for (const traceId of [...check.unfinished, ...check.broken].slice(0, 3)) {
          const read = await opened.read(traceId).catch((error: unknown) => ({ events: [], problems: [String(error)] }));
          console.log(`${traceId}: ${read.events.map((event) => `${event.seq}:${event.type}`).join(' ')}; problems: ${JSON.stringify(read.problems)}`);
          for (const [i, worker] of processes.entries()) {
            for (const line of worker.stderr().split('\n').filter((text) => text.includes(traceId))) console.log(`  worker-${i}: ${line}`);
          }
        }
      }
      return result;
    },
    async close() {
      console.table(figures);
      await killAll(processes);
      // REDFLOW_FAULTS_LOGS=<folder> keeps what each worker wrote, and the tool calls executed twice, to diagnose a failure.
      const keep = process.env.REDFLOW_FAULTS_LOGS;
      if (keep !== undefined) {
        await mkdir(keep, { recursive: true });
        for (const [i, worker] of processes.entries()) await writeFile(path.join(keep, `worker-${i}.log`), `${worker.child.spawnargs.join(' ')}\n${worker.stderr()}`);
        await writeFile(path.join(keep, 'repeated.txt'), (await repeatedExecutions(path.join(dir, 'effects.log'))).join('\n'));
      }
      await client.close().catch(() => undefined);
      for (const server of cluster.servers) {
        cluster.resume(server.name);
        cluster.heal(server.name);
      }
      await cluster.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    // One after another: two workers creating the same replicated bucket at once on a cluster that
    // has just formed may be answered 503 (JETSTREAM_NOT_ENABLED), which ends a worker's start.
    suite.coreWorkers = [await worker('core', 0), await worker('core', 1)];
    await worker('model', 2);
    await worker('tool', 0);
    await allStreamsSettled(client, profile.settleWithinMs);
  } catch (error) {
    await suite.close();
    throw error;
  }
  return suite;
}

/**
 * Fails the test unless the fault lost nothing: runs were acknowledged, every one ended whole, no
 * tool call ran twice, a run started after the fault, and every refused start has a retryable code.
 *
 * @example
 * ```ts
 * expectNothingLost(await suite.underLoad('partition', fault));
 * ```
 */
export function expectNothingLost(result: Figures): void {
  expect(result.acknowledged, `${result.fault}: runs acknowledged`).toBeGreaterThan(0);
  expect(result, result.fault).toMatchObject({ unfinished: 0, broken: 0, endedByTwo: 0, repeatedToolCalls: 0 });
  expect(result.recoveryMs, `${result.fault}: a run started after the fault`).not.toBeNull();
  // A start not acknowledged is refused with a code that says to try again: no worker could store
  // it in time, or none was reachable, never a message the client cannot read.
  for (const code of result.refusedAs.split(' ').filter(Boolean)) expect(RETRYABLE_REFUSALS, `${result.fault}: refused as ${code}`).toContain(code);
}
