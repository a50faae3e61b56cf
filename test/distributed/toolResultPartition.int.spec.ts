import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import { createNatsKvToolResultStore, toolResultKvKey } from '../../src/nats/kv/natsKvToolResultStore.js';
import { createServerNetwork, netnsUnavailable, type ServerNetwork } from './netns.js';
import { startNatsCluster, streamLeader, streamSettled, type NatsCluster } from './natsCluster.js';

// The tool results bucket (3 replicas) on three nats-servers, each in its own network namespace,
// read by direct gets, which any replica answers. Two ways a partition could make a tool call run
// twice: a result written by a cut-off leader but never committed read as stored, and a replica
// cut off from its peers (still reachable by the worker) answering a renewal with a record from
// before the worker took the call, so the worker gives its lease up while executing. Needs root
// (network namespaces); skipped, with the reason, otherwise.
const unavailable = netnsUnavailable();
const BUCKET = 'tool-results-partition';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `request` asked again while JetStream answers 503 ("JetStream system temporarily unavailable"),
 * for up to 30 s: just after a heal the cluster may still be electing its meta leader although the
 * bucket has settled (seen in CI). Not what these tests check.
 */
async function whenAvailable<T>(request: () => Promise<T>): Promise<T> {
  for (const giveUpAt = Date.now() + 30_000; ; ) {
    try {
      return await request();
    } catch (error) {
      if (Date.now() > giveUpAt || !String(error).includes('temporarily unavailable')) throw error;
      await sleep(250);
    }
  }
}

let network: ServerNetwork | undefined;
let cluster: NatsCluster | undefined;
let admin: NatsConnection;
const closers: (() => Promise<unknown>)[] = [];

/** Index in the cluster of the server that leads the bucket now. */
async function leaderIndex(): Promise<number> {
  const leader = await streamLeader(admin, `KV_${BUCKET}`);
  return cluster!.servers.findIndex((server) => server.name === leader);
}

/** A connection to these servers only (by index), which never learns of the others. */
async function pinned(name: string, indexes: number[]): Promise<NatsConnection> {
  const servers = indexes.map((i) => cluster!.servers[i]!.url);
  const nc = await connect({ servers, name, ignoreClusterUpdates: true, noRandomize: true, timeout: 1000, pingInterval: 500, maxPingOut: 2, reconnectTimeWait: 200, maxReconnectAttempts: -1 });
  closers.push(() => nc.close());
  return nc;
}

/** The key's committed record, read through the bucket's leader (a stream get, not a direct get). */
async function committed(nc: NatsConnection, key: string): Promise<{ state: string; owner: string } | undefined> {
  for (let tries = 0; ; tries++) {
    try {
      const message = await (await jetstreamManager(nc, { timeout: 2000 })).streams.getMessage(`KV_${BUCKET}`, { last_by_subj: `$KV.${BUCKET}.${toolResultKvKey(key)}` });
      return message === null ? undefined : message.json();
    } catch (error) {
      // A leader election under way after a cut: ask again.
      if (tries > 30) throw error;
      await sleep(500);
    }
  }
}

/** Tries `attempt` until it resolves or `times` tries failed, keeping every outcome. */
async function outcomes<T>(times: number, attempt: () => Promise<T>): Promise<(T | 'failed')[]> {
  const seen: (T | 'failed')[] = [];
  for (let i = 0; i < times; i++) {
    try {
      seen.push(await attempt());
      return seen;
    } catch {
      seen.push('failed');
    }
  }
  return seen;
}

describe.skipIf(unavailable !== undefined)(`the tool results store under partitions${unavailable ? `: skipped, ${unavailable}` : ''}`, () => {
  beforeAll(async () => {
    network = createServerNetwork(3);
    cluster = await startNatsCluster({ network });
    admin = await connectNats({ servers: cluster.urls.split(','), name: 'tool-results-admin' });
    await createNatsKvToolResultStore(admin, { bucket: BUCKET, replication: { replicas: 3 } });
    await streamSettled(admin, `KV_${BUCKET}`);
  }, 60_000);

  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await admin?.close();
    await cluster?.close();
    network?.remove();
  });

  it('should never read as stored a result its cut-off leader accepted but the cluster did not commit', async () => {
    const leader = await leaderIndex();
    const attached = await pinned('tool-results-cut', [leader]);
    const majority = await pinned('tool-results-majority', [(leader + 1) % 3, (leader + 2) % 3]);
    const worker = await createNatsKvToolResultStore(attached, { bucket: BUCKET });
    const key = 'stale-done:1';
    await worker.claim(key, 'w#1', 60_000);
    // The leader loses its peers; the worker still reaches it (and only it).
    network!.separate(leader, (leader + 1) % 3);
    network!.separate(leader, (leader + 2) % 3);
    try {
      // The worker's result goes to its server, which leads the bucket but reaches no quorum.
      const stored = await worker.complete(key, 'w#1', { ok: true, output: 1 }).then(
        () => 'stored',
        () => 'not stored',
      );
      // Read back where it was written: the cut-off leader answers its direct gets itself.
      const reads = await outcomes(4, () => worker.get(key));

      expect(stored).toBe('not stored');
      expect(reads.filter((read) => read !== 'failed')).toEqual([undefined]);
      expect((await committed(majority, key))?.state).toBe('running');
    } finally {
      network!.mend();
    }
    await streamSettled(admin, `KV_${BUCKET}`, 60_000);
    // Mended, the cut-off leader's write is gone: every replica answers the committed record.
    const reads = await Promise.all(Array.from({ length: 6 }, () => whenAvailable(() => new Kvm(admin).open(BUCKET).then((kv) => kv.get(toolResultKvKey(key))))));
    expect(reads.map((entry) => JSON.parse(entry!.string()).state)).toEqual(Array(6).fill('running'));
  }, 120_000);

  it('should keep the lease of a call it executes when a replica cut off from its peers answers the renewal', async () => {
    await streamSettled(admin, `KV_${BUCKET}`, 60_000);
    const leader = await leaderIndex();
    const peer = (leader + 1) % 3;
    const behind = (leader + 2) % 3;
    const other = await whenAvailable(() => createNatsKvToolResultStore(admin, { bucket: BUCKET }));
    const key = 'stale-renewal:1';
    // A worker that died holding the call: its lease is on every replica.
    await other.claim(key, 'dead#1', 1000);
    await streamSettled(admin, `KV_${BUCKET}`);
    // The worker's connection: to the leader's peer first, then to the replica about to fall behind.
    const nc = await pinned('tool-results-worker', [peer, behind]);
    const atLeader = await pinned('tool-results-leader', [leader]);
    const worker = await createNatsKvToolResultStore(nc, { bucket: BUCKET });
    network!.separate(behind, leader);
    network!.separate(behind, peer);
    try {
      await sleep(1100);
      // The worker takes the call over on the leader and its peer: the cut-off replica never hears of it.
      // A try can fail on a read answered by no one (the cut-off replica's share of the direct
      // gets) or on a write answered late, which then lands: the record says whose the call is.
      // A try can also find the dead lease still running (by the clock of the replica it read): ask
      // again until the leader holds the worker's claim.
      for (let tries = 0; (await committed(atLeader, key).catch(() => undefined))?.owner !== 'w#1' && tries < 40; tries++) {
        await outcomes(1, () => worker.claim(key, 'w#1', 60_000));
        await sleep(250);
      }
      expect((await committed(atLeader, key))?.owner).toBe('w#1');
      // Its server becomes unreachable: it reconnects to the replica that is behind.
      network!.shutOut(peer);
      for (let waited = 0; nc.info?.server_name !== cluster!.servers[behind]!.name; waited += 100) {
        if (waited > 20_000) throw new Error('the worker did not reconnect to the replica behind');
        await sleep(100);
      }
      // Storing the result fails there (no route to the leader); the renewals go on meanwhile.
      await expect(worker.complete(key, 'w#1', { ok: true, output: 1 })).rejects.toThrow();
      const renewals = await outcomes(4, () => worker.renew(key, 'w#1', 60_000));

      expect(renewals).not.toContain(false);
      expect((await committed(atLeader, key))?.owner).toBe('w#1');
    } finally {
      network!.mend();
    }
    await streamSettled(admin, `KV_${BUCKET}`, 60_000);
    // Still the worker's call: its lease, or its result when the write sent while cut off reached
    // the leader once the link was back (TCP sends it again).
    const after = await other.claim(key, 'other#1', 60_000);
    expect(after).toMatchObject({ owner: 'w#1' });
    expect(['busy', 'stored']).toContain(after.kind);
  }, 240_000);
});
