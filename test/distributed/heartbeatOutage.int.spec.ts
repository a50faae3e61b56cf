import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import { Storage } from '../../src/actors/subjects.js';
import { openRunLeases } from '../../src/nats/cluster/runLeases.js';
import { uniquePrefix } from '../nats/natsSupport.js';
import { startNatsCluster, streamLeader, type NatsCluster } from './natsCluster.js';

// The heartbeat bucket out of reach for longer than the lease: on a three-server cluster, its
// leader's server is paused (SIGSTOP) and the other two elect a new one, which takes longer than
// the lease, so the new leader has every heartbeat expired, the live workers' too. A worker must
// not call the owner of a run dead for that, and must still find a worker that did die.
const LEASE_MS = 1000;
const prefix = uniquePrefix();
let cluster: NatsCluster;
let paused: string | undefined;
const connections: NatsConnection[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  cluster = await startNatsCluster();
});

afterAll(async () => {
  if (paused) cluster.resume(paused);
  for (const nc of connections) await nc.close().catch(() => undefined);
  await cluster?.close();
});

describe('run leases across a leader election of the heartbeat bucket longer than the lease', () => {
  it('should not find the runs of a live worker orphans when the bucket has a leader again, and should find them once it dies', async () => {
    const connect = async (name: string, url: string): Promise<NatsConnection> => {
      const nc = await connectNats({ servers: url, name, timeoutMs: 2000 });
      connections.push(nc);
      return nc;
    };
    const setup = await connect('setup', cluster.urls.split(',')[0]!);
    await (await openRunLeases(setup, { prefix, owner: 'setup', leaseMs: LEASE_MS, replication: { replicas: 3 } })).close();
    const leader = await streamLeader(setup, `KV_${Storage.leasesBucket(prefix)}`);
    const [ownerServer, lookerServer] = cluster.servers.filter((server) => server.name !== leader);
    const ownerConnection = await connect('owner', ownerServer!.url);
    const owner = await openRunLeases(ownerConnection, { prefix, owner: 'live-owner', leaseMs: LEASE_MS });
    const looker = await openRunLeases(await connect('looker', lookerServer!.url), { prefix, owner: 'looker', leaseMs: LEASE_MS });
    expect(await owner.register({ traceId: 'run-of-live-owner', startedAt: new Date().toISOString() })).toBe(true);
    await expect.poll(async () => (await looker.orphans()).length, { timeout: 3 * LEASE_MS }).toBe(0);

    paused = leader;
    cluster.pause(leader);
    // Looked at as often as a scan could, through the election and for two leases after the
    // first answer from the new leader.
    const seenOrphaned: string[] = [];
    let firstAnswer: number | undefined;
    let failures = 0;
    const giveUp = Date.now() + 30_000;
    while (Date.now() < giveUp && (firstAnswer === undefined || Date.now() < firstAnswer + 2 * LEASE_MS)) {
      try {
        const found = await looker.orphans();
        if (failures > 0) {
          firstAnswer ??= Date.now();
          seenOrphaned.push(...found.map((record) => record.traceId));
        }
      } catch {
        failures++;
      }
      await sleep(25);
    }
    expect(failures, 'the bucket was out of reach').toBeGreaterThan(0);
    expect(firstAnswer, 'the bucket came back').toBeDefined();
    expect(seenOrphaned).toEqual([]);
    cluster.resume(leader);
    paused = undefined;

    // The owner dies without a word (its heartbeat is not deleted, it expires): now it is an orphan.
    await ownerConnection.close();
    await expect.poll(async () => (await looker.orphans().catch(() => [])).map((record) => record.traceId), { timeout: 15_000, interval: 100 }).toEqual(['run-of-live-owner']);
    await looker.close();
  }, 90_000);
});
