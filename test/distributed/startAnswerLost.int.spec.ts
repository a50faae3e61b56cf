import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { connectNats } from '../../src/nats/connect.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { startCuttableProxy, type CuttableProxy } from '../nats/cuttableProxy.js';
import { ROOT, removePrefix } from './clusterSupport.js';

// A client whose connection drops while its start is answered (a server restarting under it, as
// in a rolling restart): the answer is lost, and the start, still waiting, is published again
// after the reconnect. The core worker that hears the copy finds the run the first copy started
// and says its trace id is taken. The client must follow that run, its own, not report it taken.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
const TRACE_ID = 'answer-lost-1';

let proxy: CuttableProxy;
let clientNc: NatsConnection;
let workerNc: NatsConnection;
let actors: ActorWorker;
let core: CoreWorker;

beforeAll(async () => {
  proxy = await startCuttableProxy(NATS_URL);
  // The client alone goes through the proxy: its connection is the one that drops.
  clientNc = await connectNats({ servers: proxy.url, name: 'answer-lost-client' });
  workerNc = await connectTestServer('answer-lost-workers');
  actors = await startActorWorker({ nc: workerNc, flowPath, prefix, roles: ['model', 'tool', 'memory'] });
  core = await startCoreWorker({
    nc: workerNc,
    flowPath,
    prefix,
    owner: 'answer-lost-core',
    // The run's first event is stored, its answer not sent yet: the client's side drops now.
    onEvent: (event) => {
      if (event.type !== 'run.started' || event.traceId !== TRACE_ID) return;
      proxy.cutClientSide();
      setTimeout(() => proxy.open(), 200);
    },
  });
});

afterAll(async () => {
  await core?.close();
  await actors?.close();
  await removePrefix(workerNc, prefix);
  await workerNc?.drain();
  await clientNc?.close();
  await proxy?.close();
});

describe('a run start whose answer is lost in a reconnect of the client', () => {
  it('should follow the run its first copy started to its end, not refuse it as RUN_TRACE_ID_TAKEN', async () => {
    const run = await startRemoteRun({ nc: clientNc, prefix, input: 'go', traceId: TRACE_ID, startTimeoutMs: 10_000 });
    const { outcome } = await run.result;
    expect(outcome.status).toBe('done');
  }, 30_000);

  it('should still refuse a later start of the same trace id, sent once, as RUN_TRACE_ID_TAKEN', async () => {
    const again = await startRemoteRun({ nc: clientNc, prefix, input: 'go', traceId: TRACE_ID, startTimeoutMs: 10_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(again).toMatchObject({ code: ErrorCode.RUN_TRACE_ID_TAKEN });
  }, 30_000);
});
