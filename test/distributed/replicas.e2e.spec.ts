import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import { connectNats } from '../../src/nats/connect.js';
import { NATS_URL, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT } from './clusterSupport.js';
import { startNatsCluster, type NatsCluster } from './natsCluster.js';
import { endingWithin, killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// `redflow worker --replicas n` on a real three-server cluster: the trace stream and every KV
// bucket the worker creates have n replicas; more than the cluster can hold is a coded error.
const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow-memory.json');
let cluster: NatsCluster;
let nc: NatsConnection;
const processes: RedflowProcess[] = [];

function worker(args: string[], env: Record<string, string> = {}): RedflowProcess {
  const started = startRedflow(['worker', flowPath, ...args], env);
  processes.push(started);
  return started;
}

beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await connectNats({ servers: cluster.urls.split(','), name: 'replicas-test' });
});

afterAll(async () => {
  await killAll(processes);
  await nc?.close();
  await cluster?.close();
});

describe('redflow worker --replicas on a three-server cluster', () => {
  it('should make the trace stream and the runs, leases, tool-results and memory buckets with three replicas', async () => {
    const prefix = uniquePrefix();
    const started = worker(['--nats', cluster.urls, '--prefix', prefix], { REDFLOW_REPLICAS: '3' });
    await started.ready();
    const jsm = await jetstreamManager(nc);
    const assets = [
      Storage.traceStream(prefix),
      ...[Storage.runsBucket(prefix), Storage.leasesBucket(prefix), Storage.toolResultsBucket(prefix), Storage.memoryBucket(prefix)].map((bucket) => `KV_${bucket}`),
    ];
    const replicas = await Promise.all(assets.map(async (stream) => (await jsm.streams.info(stream)).config.num_replicas));
    expect(Object.fromEntries(assets.map((stream, i) => [stream, replicas[i]]))).toEqual(Object.fromEntries(assets.map((stream) => [stream, 3])));
  }, 60_000);

  it('should refuse more replicas than servers, and three replicas on servers one tag names, with JETSTREAM_REPLICAS_UNAVAILABLE', async () => {
    const tooMany = worker(['--nats', cluster.urls, '--prefix', uniquePrefix(), '--replicas', '5']);
    expect(await endingWithin(tooMany, 30_000)).toMatchObject({ code: 69 });
    expect(tooMany.stderr()).toContain(ErrorCode.JETSTREAM_REPLICAS_UNAVAILABLE);
    const oneTag = worker(['--nats', cluster.urls, '--prefix', uniquePrefix(), '--replicas', '3', '--placement-tags', 'az:a']);
    expect(await endingWithin(oneTag, 30_000)).toMatchObject({ code: 69 });
    expect(oneTag.stderr()).toContain(ErrorCode.JETSTREAM_REPLICAS_UNAVAILABLE);
  }, 60_000);

  it('should refuse three replicas on a single server, and a replica count that is not one, as mistakes of the user', async () => {
    const single = worker(['--nats', NATS_URL, '--prefix', uniquePrefix(), '--replicas', '3']);
    expect(await endingWithin(single, 30_000)).toMatchObject({ code: 69 });
    expect(single.stderr()).toContain(ErrorCode.JETSTREAM_REPLICAS_UNAVAILABLE);
    const nonsense = worker(['--nats', NATS_URL, '--prefix', uniquePrefix(), '--replicas', 'three']);
    expect(await endingWithin(nonsense, 30_000)).toMatchObject({ code: 64 });
    expect(nonsense.stderr()).toContain('--replicas');
  }, 60_000);
});
