import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { openRunLeases } from '../../src/nats/cluster/runLeases.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { eventually, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, exited, startWorkerProcess } from './clusterSupport.js';
import { startNatsCluster, type NatsCluster } from './natsCluster.js';

// A takeover whose claim goes through while the run's log cannot be read: on a three-server
// cluster, the trace stream is kept on n1 only and the run buckets on n2 only (placement tags),
// so pausing n1 (SIGSTOP) leaves the leases working and the log unreadable. The heir claims the
// dead worker's run, its read times out, and the run's record names the heir, a live worker no
// scan would take it from: the heir itself must try again once the log is back.
const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
const LEASE_MS = 1000;
let cluster: NatsCluster;
const connections: NatsConnection[] = [];
let actors: ActorWorker | undefined;
let heir: CoreWorker | undefined;
let doomed: ChildProcess | undefined;

async function connect(name: string, server: string): Promise<NatsConnection> {
  const nc = await connectNats({ servers: server, name, timeoutMs: 2000 });
  connections.push(nc);
  return nc;
}

beforeAll(async () => {
  cluster = await startNatsCluster();
});

afterAll(async () => {
  doomed?.kill('SIGKILL');
  cluster?.resume('n1');
  await heir?.close().catch(() => undefined);
  await actors?.close().catch(() => undefined);
  for (const nc of connections) await nc.close().catch(() => undefined);
  delete process.env.SLOW_BUMP_MS;
  await cluster?.close();
});

describe('a takeover whose log read fails after its claim', () => {
  it('should be tried again by the heir once the log can be read, and the run should end whole', async () => {
    const n3 = cluster.servers[2]!.url;
    const setup = await connect('setup', n3);
    // Opened now, read at the end: opening asks the cluster's meta leader, which may still be
    // electing after the pause when the run has ended (a CI run timed out there).
    const store = await openJetStreamEventStore(setup, { prefix, placementTags: ['az:a'] });
    await (await openRunLeases(setup, { prefix, owner: 'setup', leaseMs: LEASE_MS, replication: { placementTags: ['az:b'] } })).close();
    process.env.SLOW_BUMP_MS = '1500';
    actors = await startActorWorker({ nc: await connect('actors', n3), flowPath, prefix, roles: ['model', 'tool'] });
    doomed = await startWorkerProcess(flowPath, 'core', { prefix, nats: n3, extraArgs: ['--lease', String(LEASE_MS), '--attempt-timeout', '3000'] });

    const live: AgentEvent[] = [];
    const run = await startRemoteRun({ nc: await connect('client', n3), prefix, input: 'go', traceId: 'stuck-1', onEvent: (event) => live.push(event) });
    await eventually(() => live.some((event) => event.type === 'tool.requested'), 10_000);
    const lines: string[] = [];
    heir = await startCoreWorker({ nc: await connect('heir', n3), flowPath, prefix, owner: 'heir', leaseMs: LEASE_MS, attemptTimeoutMs: 3000, log: (line) => lines.push(line) });

    doomed.kill('SIGKILL');
    await exited(doomed);
    cluster.pause('n1');
    await eventually(() => lines.some((line) => line.includes('stuck-1') && line.includes('cannot take over')), 30_000);
    cluster.resume('n1');

    const { outcome } = await run.result;
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'bumped three times' });
    const { events, problems } = await store.read('stuck-1');
    expect(problems).toEqual([]);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'run.completed' || e.type === 'run.failed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'run.resumed')).toHaveLength(1);
  }, 90_000);
});
