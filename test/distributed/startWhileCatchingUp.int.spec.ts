import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { openRunLeases } from '../../src/nats/cluster/runLeases.js';
import { uniquePrefix } from '../nats/natsSupport.js';
import { ROOT } from './clusterSupport.js';
import { startNatsCluster, type NatsCluster } from './natsCluster.js';

// A worker started while its cluster cannot answer JetStream yet (two of three servers down: no
// meta leader, no stream leader; as after a kill -9 during an election, while the cluster catches
// up): its start waits, saying why, and goes on once the cluster answers, rather than ending on a
// nats.js timeout. A cluster that does not come back within the start's wait ends it with a coded,
// retryable error.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
let cluster: NatsCluster;
const connections: NatsConnection[] = [];
const workers: CoreWorker[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(url: string | string[]): Promise<NatsConnection> {
  const nc = await connectNats({ servers: url, name: 'catching-up' });
  connections.push(nc);
  return nc;
}

beforeAll(async () => {
  cluster = await startNatsCluster();
  const setup = await connect(cluster.urls.split(','));
  // A cluster that has just formed may answer its first JetStream requests with 503 for a moment.
  for (let tries = 0; ; tries++) {
    try {
      await (await openJetStreamEventStore(setup, { prefix, replicas: 3 })).close();
      await (await openRunLeases(setup, { prefix, owner: 'setup', leaseMs: 1500, replication: { replicas: 3 } })).close();
      break;
    } catch (error) {
      if (tries > 50) throw error;
      await sleep(200);
    }
  }
}, 90_000);

afterAll(async () => {
  for (const worker of workers) await worker.close().catch(() => undefined);
  for (const nc of connections) await nc.close().catch(() => undefined);
  await cluster?.close();
});

describe('a worker started while its cluster cannot answer JetStream yet', () => {
  it('should wait for the cluster, logging why, and start once the stopped servers are back', async () => {
    const [only, ...stopped] = cluster.servers;
    for (const server of stopped) await cluster.kill(server.name);
    const nc = await connect(only!.url);
    const lines: string[] = [];
    const starting = startCoreWorker({ nc, flowPath, prefix, owner: 'late-core', leaseMs: 1500, replication: { replicas: 3 }, log: (line) => lines.push(line) });
    const tools = idempotentToolServer(nc, prefix, { replication: { replicas: 3 }, log: (line) => lines.push(line) });
    // Until the first attempt has failed: the servers come back while the start waits.
    for (let waited = 0; !lines.some((line) => line.includes('waiting for the NATS cluster')); waited += 100) {
      const ended = await Promise.race([starting.then(() => 'started', (error: unknown) => `failed: ${String(error)}`), sleep(100).then(() => undefined)]);
      if (ended !== undefined) throw new Error(`the start ended before the cluster was back: ${ended}`);
      if (waited > 30_000) throw new Error('the start said nothing while the cluster could not answer');
    }
    for (const server of stopped) await cluster.start(server.name);
    workers.push(await starting);
    await tools;
    expect(lines.filter((line) => line.includes('waiting for the NATS cluster')).length).toBeGreaterThan(0);
  }, 120_000);

  it('should end the start with a retryable LOG_STORE_UNAVAILABLE when the cluster does not answer within its wait', async () => {
    await cluster.ready();
    const [only, ...stopped] = cluster.servers;
    for (const server of stopped) await cluster.kill(server.name);
    const nc = await connect(only!.url);
    const failure = await startCoreWorker({ nc, flowPath, prefix, owner: 'given-up', replication: { replicas: 3 }, startWithinMs: 2000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    for (const server of stopped) await cluster.start(server.name);
    expect(failure).toBeInstanceOf(RedflowError);
    expect(failure).toMatchObject({ code: ErrorCode.LOG_STORE_UNAVAILABLE, retryable: true });
  }, 120_000);
});
