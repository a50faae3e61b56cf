import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Storage } from '../../src/actors/subjects.js';
import { openRunLeases, type RunLeases } from '../../src/nats/cluster/runLeases.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { removePrefix } from './clusterSupport.js';

// `redflow resume <traceId> --nats` opens the leases and asks about one run at once: its answer
// must not depend on how far the watch of the run records has got.

const prefix = uniquePrefix();
const RUNS = 400;
/** Workers that die while another looks for orphans: each expiring heartbeat is a chance for a listing to stall. */
const DYING = 32;
/** Concurrent looks for orphans. */
const LOOKERS = 4;
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connectTestServer('run-leases-test');
  // A core worker that registered many runs and died: its heartbeat is gone, its runs are orphans.
  const dead = await openRunLeases(nc, { prefix, owner: 'dead-core', leaseMs: 1000 });
  await Promise.all(Array.from({ length: RUNS }, (_, i) => dead.register({ traceId: `run-${i}`, startedAt: new Date().toISOString() })));
  await dead.close();
});

afterAll(async () => {
  await removePrefix(nc, prefix);
  await nc.drain();
});

describe('run leases opened by a process that asks about one run at once', () => {
  it('should find the run an orphan and claim it before the watch of the records has caught up', async () => {
    const leases = await openRunLeases(nc, { prefix, owner: 'resume-cli', leaseMs: 1000 });
    try {
      const orphan = await leases.orphan(`run-${RUNS - 1}`);
      expect(orphan?.owner).toBe('dead-core');
      expect(await leases.claim(orphan!)).toBe(true);
      expect(await leases.orphan(`run-${RUNS - 1}`)).toBeUndefined();
    } finally {
      await leases.close();
    }
  });

  it('should not call a run an orphan while its owner has a heartbeat', async () => {
    const owner = await openRunLeases(nc, { prefix, owner: 'live-core', leaseMs: 1000 });
    const asker = await openRunLeases(nc, { prefix, owner: 'asker', leaseMs: 1000 });
    try {
      expect(await owner.register({ traceId: 'live-run', startedAt: new Date().toISOString() })).toBe(true);
      expect(await asker.orphan('live-run')).toBeUndefined();
      expect(await asker.orphan('no-such-run')).toBeUndefined();
    } finally {
      await owner.close();
      await asker.close();
    }
  });

  it('should not let a worker claim an orphan another worker has claimed since it was found', async () => {
    const first = await openRunLeases(nc, { prefix, owner: 'first-heir', leaseMs: 1000 });
    const late = await openRunLeases(nc, { prefix, owner: 'late-heir', leaseMs: 1000 });
    try {
      const orphan = await late.orphan('run-0');
      expect(orphan?.owner).toBe('dead-core');
      expect(await first.claim(orphan!)).toBe(true);
      // Once the late worker's watch has seen that claim, its stale find must still lose.
      await expect.poll(async () => (await late.orphans()).some((record) => record.traceId === 'run-0')).toBe(false);
      expect(await late.claim(orphan!)).toBe(false);
      expect(first.owns('run-0')).toBe(true);
      expect(await late.orphan('run-0')).toBeUndefined();
    } finally {
      await first.close();
      await late.close();
    }
  });

  it('should register a run once while its record stands, and again once it was dropped', async () => {
    const leases = await openRunLeases(nc, { prefix, owner: 'registering-core', leaseMs: 1000 });
    const other = await openRunLeases(nc, { prefix, owner: 'other-core', leaseMs: 1000 });
    try {
      const record = { traceId: 'registered-run', startedAt: new Date().toISOString() };
      expect(await leases.register(record)).toBe(true);
      expect(await other.register(record)).toBe(false);
      expect(leases.owns('registered-run')).toBe(true);
      // Another worker's watch reads the record when it looks: the owner is the one that registered it.
      await expect.poll(() => other.owns('registered-run')).toBe(false);
      await leases.finish('registered-run');
      // A record dropped (its run never logged) leaves its key deleted: the trace id can be registered again.
      expect(await other.register(record)).toBe(true);
      expect(other.owns('registered-run')).toBe(true);
      await expect.poll(() => leases.owns('registered-run')).toBe(false);
    } finally {
      await leases.close();
      await other.close();
    }
  });

  it('should not call a run an orphan when its owner beats again within a lease of its heartbeat going missing', async () => {
    // The owner's heartbeat is the test's to take away and put back: gone from the bucket with no
    // trace, as when it expires (a leader election of the bucket longer than the lease does that
    // to every heartbeat), not deleted, as a closing worker deletes its own.
    const kvm = new Kvm(nc);
    const heartbeats = await kvm.open(Storage.leasesBucket(prefix));
    const records = await kvm.open(Storage.runsBucket(prefix));
    const jsm = await jetstreamManager(nc);
    const beat = () => heartbeats.put('blinking-core', JSON.stringify({ owner: 'blinking-core', at: new Date().toISOString() }));
    const expire = () => jsm.streams.purge(`KV_${Storage.leasesBucket(prefix)}`, { filter: `$KV.${Storage.leasesBucket(prefix)}.blinking-core` });
    await beat();
    await records.create('blinking-run', JSON.stringify({ traceId: 'blinking-run', owner: 'blinking-core', startedAt: new Date().toISOString() }));
    const asker = await openRunLeases(nc, { prefix, owner: 'resume-asker', leaseMs: 1000 });
    try {
      await expire();
      const asked = asker.orphan('blinking-run');
      await new Promise((resolve) => setTimeout(resolve, 400));
      await beat();
      expect(await asked).toBeUndefined();

      // Missing for a whole lease of a working bucket: now it is an orphan, found after that lease.
      await expire();
      const since = Date.now();
      expect((await asker.orphan('blinking-run'))?.owner).toBe('blinking-core');
      expect(Date.now() - since).toBeGreaterThanOrEqual(asker.leaseMs);
    } finally {
      await asker.close();
    }
  });

  it('should keep answering who the orphans are while the heartbeats of dead workers expire', async () => {
    // Workers whose processes die one after another: their heartbeats stop unrenewed (no
    // delete) and expire on the server while another worker keeps looking for orphans.
    const own = uniquePrefix();
    const asker = await openRunLeases(nc, { prefix: own, owner: 'asker', leaseMs: 1000 });
    const deaths: Promise<void>[] = [];
    try {
      for (let i = 0; i < DYING; i++) {
        const connection = await connectTestServer(`dying-core-${i}`);
        const dying = await openRunLeases(connection, { prefix: own, owner: `dying-core-${i}`, leaseMs: 1000 });
        expect(await dying.register({ traceId: `run-of-${i}`, startedAt: new Date().toISOString() })).toBe(true);
        deaths.push(new Promise((resolve) => setTimeout(resolve, 60 * i)).then(() => connection.close()));
      }
      // Several lookers at once, as several core workers scan: more looks land on an expiry.
      const deadline = Date.now() + 15_000;
      await Promise.all(Array.from({ length: LOOKERS }, () => lookUntilAllOrphaned(asker, deadline)));
    } finally {
      await Promise.all(deaths);
      await asker.close();
      await removePrefix(nc, own);
    }
  });
});

/** Asks `leases` for the orphans until all {@link DYING} runs are, failing on any look that stalls. */
async function lookUntilAllOrphaned(leases: RunLeases, deadline: number): Promise<void> {
  for (let found = 0; found < DYING; ) {
    if (Date.now() > deadline) throw new Error(`only ${found} of ${DYING} runs became orphans`);
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('orphans() has not answered for 3 s')), 3000);
    });
    try {
      found = (await Promise.race([leases.orphans(), stalled])).length;
    } finally {
      clearTimeout(timer);
    }
  }
}
