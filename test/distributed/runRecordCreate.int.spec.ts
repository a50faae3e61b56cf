import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRunLeases, type RunLeases } from '../../src/nats/cluster/runLeases.js';
import { lastStoredOn } from '../../src/nats/jetstream/storeRequests.js';
import { Storage } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import { startNatsServer, uniquePrefix, type PrivateNatsServer } from '../nats/natsSupport.js';

// A core worker's create of a run's record is refused when the key was written before. Whose record
// it is decides between starting the run and RUN_TRACE_ID_TAKEN, so it is read where the create was
// refused, at the bucket's leader. On a cluster a direct get may be answered by a replica still
// catching up that has not seen the record: here the `worker` user may not make direct gets at all,
// so a decision that rests on one cannot be right. (A rolling restart refused a run's first attempt
// as taken: its create, sent again after a reconnect, was refused because of its own first copy.)

const prefix = uniquePrefix();
let dir: string;
let server: PrivateNatsServer;
const connections: NatsConnection[] = [];
const opened: RunLeases[] = [];

async function leasesAs(user: string, owner: string): Promise<RunLeases> {
  const nc = await connect({ servers: server.url, user, pass: user });
  connections.push(nc);
  const leases = await openRunLeases(nc, { prefix, owner, leaseMs: 2000 });
  opened.push(leases);
  return leases;
}

async function storedOwner(traceId: string): Promise<string | undefined> {
  const held = await lastStoredOn(connections[0]!, `KV_${Storage.runsBucket(prefix)}`, `$KV.${Storage.runsBucket(prefix)}.${traceId}`);
  return held === null || held.data.byteLength === 0 ? undefined : (JSON.parse(new TextDecoder().decode(held.data)) as { owner: string }).owner;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-record-create-'));
  const config = path.join(dir, 'nats.conf');
  await writeFile(
    config,
    `jetstream { store_dir: "${dir}" }\nauthorization { users = [\n` +
      `  { user: admin, password: admin }\n` +
      `  { user: worker, password: worker, permissions: { publish: { deny: ["$JS.API.DIRECT.GET.>"] } } }\n` +
      `  { user: blind, password: blind, permissions: { publish: { deny: ["$JS.API.DIRECT.GET.>", "$JS.API.STREAM.MSG.GET.>"] } } }\n] }\n`,
  );
  server = await startNatsServer(config);
  // The buckets made by a worker that may read them, as the first core worker of a cluster does.
  await leasesAs('admin', 'first-core');
});

afterAll(async () => {
  for (const leases of opened) await leases.close().catch(() => undefined);
  for (const nc of connections) await nc.close().catch(() => undefined);
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a run record created where direct reads do not see it yet', () => {
  it('should start a run whose create is refused because of its own first copy', async () => {
    const leases = await leasesAs('worker', 'core-a');
    const start = { traceId: 'sent-twice', startedAt: '2026-01-01T00:00:00.000Z' };
    expect(await leases.register(start)).toBe(true);

    expect(await leases.register(start)).toBe(true);
    expect(leases.owns('sent-twice')).toBe(true);
  });

  it('should refuse a run whose trace id another worker’s record holds', async () => {
    const first = await leasesAs('admin', 'core-b');
    const second = await leasesAs('worker', 'core-c');
    expect(await first.register({ traceId: 'taken', startedAt: '2026-01-01T00:00:00.000Z' })).toBe(true);

    expect(await second.register({ traceId: 'taken', startedAt: '2026-01-01T00:00:01.000Z' })).toBe(false);
    expect(await storedOwner('taken')).toBe('core-b');
  });

  it('should record again a run whose record was deleted', async () => {
    const leases = await leasesAs('worker', 'core-d');
    expect(await leases.register({ traceId: 'dropped', startedAt: '2026-01-01T00:00:00.000Z' })).toBe(true);
    await leases.finish('dropped');

    expect(await leases.register({ traceId: 'dropped', startedAt: '2026-01-01T00:00:02.000Z' })).toBe(true);
    expect(await storedOwner('dropped')).toBe('core-d');
  });

  it('should say the store is unavailable, retryable, not that the run is taken, when the record cannot be read', async () => {
    const leases = await leasesAs('blind', 'core-e');
    const start = { traceId: 'unreadable', startedAt: '2026-01-01T00:00:00.000Z' };
    expect(await leases.register(start)).toBe(true);

    await expect(leases.register(start)).rejects.toMatchObject({ code: ErrorCode.LOG_STORE_UNAVAILABLE, retryable: true });
  }, 30_000);
});
