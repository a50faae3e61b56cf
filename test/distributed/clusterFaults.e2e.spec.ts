import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import { connectNats } from '../../src/nats/connect.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { uniquePrefix } from '../nats/natsSupport.js';
import { ROOT } from './clusterSupport.js';
import { checkRuns, repeatedExecutions, startLoad } from './faultLoad.js';
import { allStreamsSettled, startNatsCluster, streamLeader, type NatsCluster } from './natsCluster.js';
import { killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// The fault suite: a real three-server NATS cluster on this machine (natsCluster.ts), the trace
// stream and every bucket with three replicas (REDFLOW_REPLICAS=3), two core workers, a model
// worker and a tool worker (real `redflow worker` processes, each given the servers in another
// order), and a steady load of runs while one fault at a time is injected. After each: every run
// whose start was acknowledged ends, every log replays whole (seqs 1..n, one ending, no problem),
// no tool call is executed twice, and the time to recover is reported. The figures are printed
// (docs/cluster.md keeps them). REDFLOW_FAULTS=long runs the long profile: a heavier load
// (hundreds of runs in flight), longer faults, each fault twice.
const LONG = process.env.REDFLOW_FAULTS === 'long';
const profile = LONG
  ? { everyMs: 10, inFlight: 300, warmupMs: 3000, settleMs: 3000, downMs: 8000, pauseMs: 12_000, rounds: 2, settleWithinMs: 120_000 }
  : { everyMs: 120, inFlight: 32, warmupMs: 800, settleMs: 800, downMs: 3000, pauseMs: 7000, rounds: 1, settleWithinMs: 30_000 };
const flowPath = path.join(ROOT, 'test/fixtures/crash/flow.json');
const prefix = uniquePrefix();
const stream = Storage.traceStream(prefix);
/** Core workers: a short lease, so takeovers happen within the faults; tool workers keep the default tool-call lease (10 s). */
const CORE_LEASE = ['--lease', '1500', '--attempt-timeout', '3000'];

let cluster: NatsCluster;
let client: NatsConnection;
let store: JetStreamEventStore;
let dir: string;
const processes: RedflowProcess[] = [];
let coreWorkers: RedflowProcess[] = [];

/** The servers in another order for each worker: they attach to different servers and fail over. */
function rotated(by: number): string {
  const urls = cluster.urls.split(',');
  return [...urls.slice(by % 3), ...urls.slice(0, by % 3)].join(',');
}

async function worker(role: string, at: number): Promise<RedflowProcess> {
  const started = startRedflow(['worker', flowPath, '--role', role, '--nats', rotated(at), '--prefix', prefix, ...(role === 'core' ? CORE_LEASE : [])], {
    REDFLOW_REPLICAS: '3',
    COUNTER_FILE: path.join(dir, 'effects.log'),
    BUMP_DELAY_MS: '250',
  });
  processes.push(started);
  await started.ready();
  return started;
}

interface Figures {
  fault: string;
  acknowledged: number;
  refusedStarts: number;
  /** The codes the refused starts came back with. */
  refusedAs: string;
  unfinished: number;
  broken: number;
  takenOver: number;
  repeatedToolCalls: number;
  recoveryMs: number | null;
}
const figures: Figures[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the load, injects `fault` after a warm-up, and checks every acknowledged run. */
async function underLoad(name: string, fault: () => Promise<void>): Promise<Figures> {
  const repeatedBefore = (await repeatedExecutions(path.join(dir, 'effects.log'))).length;
  const load = startLoad(client, prefix, name.replace(/[^a-z0-9]+/gi, '-'), profile);
  await sleep(profile.warmupMs);
  const injectedAt = Date.now();
  await fault();
  await allStreamsSettled(client, profile.settleWithinMs);
  await sleep(profile.settleMs);
  await load.stop();
  const after = load.acknowledged.filter((run) => run.sentAt >= injectedAt).map((run) => run.ackAt - injectedAt);
  const check = await checkRuns(store, load.acknowledged.map((run) => run.traceId), 60_000);
  const result: Figures = {
    fault: name,
    acknowledged: load.acknowledged.length,
    refusedStarts: load.refused.length,
    refusedAs: [...new Set(load.refused.map((refusal) => refusal.code))].sort().join(' '),
    unfinished: check.unfinished.length,
    broken: check.broken.length,
    takenOver: check.resumed,
    repeatedToolCalls: (await repeatedExecutions(path.join(dir, 'effects.log'))).length - repeatedBefore,
    recoveryMs: after.length > 0 ? Math.min(...after) : null,
  };
  figures.push(result);
  return result;
}

function expectNothingLost(result: Figures): void {
  expect(result.acknowledged, `${result.fault}: runs acknowledged`).toBeGreaterThan(0);
  expect(result, result.fault).toMatchObject({ unfinished: 0, broken: 0, repeatedToolCalls: 0 });
  expect(result.recoveryMs, `${result.fault}: a run started after the fault`).not.toBeNull();
  // A start not acknowledged is refused with a code that says to try again: no worker could store
  // it in time, or none was reachable, never a message the client cannot read.
  for (const code of result.refusedAs.split(' ').filter(Boolean)) expect(RETRYABLE_REFUSALS, `${result.fault}: refused as ${code}`).toContain(code);
}

const RETRYABLE_REFUSALS: readonly string[] = [ErrorCode.TRANSPORT_TIMEOUT, ErrorCode.LOG_STORE_UNAVAILABLE, ErrorCode.TRANSPORT_NO_RESPONDER];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-faults-'));
  cluster = await startNatsCluster();
  client = await connectNats({ servers: cluster.urls.split(','), name: 'fault-suite-client' });
  // A cluster that has just formed may answer its first JetStream requests with 503 for a moment.
  for (let tries = 0; store === undefined; tries++) {
    store = await openJetStreamEventStore(client, { prefix, replicas: 3 }).catch(async (error: unknown) => {
      if (tries > 50) throw error;
      await sleep(200);
      return undefined as unknown as JetStreamEventStore;
    });
  }
  // One after another: two workers creating the same replicated bucket at once on a cluster that
  // has just formed may be answered 503 (JETSTREAM_NOT_ENABLED), which ends a worker's start.
  coreWorkers = [await worker('core', 0), await worker('core', 1)];
  await worker('model', 2);
  await worker('tool', 0);
  await allStreamsSettled(client, profile.settleWithinMs);
}, 60_000);

afterAll(async () => {
  console.table(figures);
  await killAll(processes);
  // REDFLOW_FAULTS_LOGS=<folder> keeps what each worker wrote, and the tool calls executed twice, to diagnose a failure.
  const keep = process.env.REDFLOW_FAULTS_LOGS;
  if (keep !== undefined && dir !== undefined) {
    await mkdir(keep, { recursive: true });
    for (const [i, worker] of processes.entries()) await writeFile(path.join(keep, `worker-${i}.log`), `${worker.child.spawnargs.join(' ')}\n${worker.stderr()}`);
    await writeFile(path.join(keep, 'repeated.txt'), (await repeatedExecutions(path.join(dir, 'effects.log'))).join('\n'));
  }
  await client?.close().catch(() => undefined);
  for (const server of cluster?.servers ?? []) cluster.resume(server.name);
  await cluster?.close();
  await rm(dir, { recursive: true, force: true });
});

describe(`a three-server NATS cluster under faults (${LONG ? 'long' : 'short'} profile)`, () => {
  it('should end every acknowledged run whole when the trace stream leader is killed (kill -9) and restarted', async () => {
    for (let round = 0; round < profile.rounds; round++) {
      const result = await underLoad(`kill -9 stream leader #${round + 1}`, async () => {
        const leader = await streamLeader(client, stream);
        await cluster.kill(leader);
        await sleep(profile.downMs);
        await cluster.start(leader);
      });
      expectNothingLost(result);
    }
  }, LONG ? 600_000 : 180_000);

  it('should end every acknowledged run whole when the stream leader is paused (SIGSTOP) past the election timeout', async () => {
    for (let round = 0; round < profile.rounds; round++) {
      const result = await underLoad(`SIGSTOP stream leader #${round + 1}`, async () => {
        const leader = await streamLeader(client, stream);
        cluster.pause(leader);
        await sleep(profile.pauseMs);
        cluster.resume(leader);
      });
      expectNothingLost(result);
    }
  }, LONG ? 600_000 : 180_000);

  it('should end every acknowledged run whole through a rolling restart of the three servers', async () => {
    const result = await underLoad('rolling restart', async () => {
      for (const server of cluster.servers) {
        await cluster.restart(server.name);
        await cluster.ready();
        await allStreamsSettled(client, profile.settleWithinMs);
      }
    });
    expectNothingLost(result);
  }, LONG ? 600_000 : 180_000);

  it('should end every acknowledged run whole when a core worker is killed (kill -9) during a leader election', async () => {
    const result = await underLoad('kill -9 core worker during election', async () => {
      const leader = await streamLeader(client, stream);
      const [doomed] = coreWorkers;
      await cluster.kill(leader);
      doomed!.child.kill('SIGKILL');
      await doomed!.ended;
      await sleep(profile.downMs);
      await cluster.start(leader);
      await allStreamsSettled(client, profile.settleWithinMs);
      coreWorkers = [coreWorkers[1]!, await worker('core', 2)];
    });
    expectNothingLost(result);
    expect(result.takenOver, 'the killed worker left runs to take over').toBeGreaterThan(0);
  }, LONG ? 600_000 : 180_000);
});
