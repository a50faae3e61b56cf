// A flow with a context window on a cluster: the core worker builds each request, so it fits them
// (logged as omittedMessages), and it refuses a run its window cannot hold before the run has a record.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix } from './clusterSupport.js';

const prefix = uniquePrefix();
const long = 'lorem ipsum dolor sit amet '.repeat(80);
let dir: string;
let nc: NatsConnection;
let core: CoreWorker;
let actors: ActorWorker;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cluster-window-'));
  // The tool's answers are long, so three of them do not fit the window together.
  await writeFile(
    path.join(dir, 'slowBump.mjs'),
    `export default { name: 'bump', description: 'Adds, at length', inputSchema: { type: 'object', properties: { by: { type: 'integer' } } },
      async execute(input) { return { by: input.by, report: ${JSON.stringify(long)} }; } };`,
  );
  const flow = JSON.parse(await readFile(path.join(ROOT, 'test/fixtures/cluster/flow.json'), 'utf8')) as {
    id: string;
    nodes: { id: string; config?: Record<string, unknown> }[];
  };
  flow.id = 'cluster-window';
  const model = flow.nodes.find((node) => node.id === 'model') as { config: Record<string, unknown> };
  model.config = { ...model.config, model: 'gpt-4o', contextTokens: 1200, maxTokens: 100 };
  await writeFile(path.join(dir, 'flow.json'), JSON.stringify(flow));
  nc = await connectTestServer('cluster-window');
  actors = await startActorWorker({ nc, flowPath: path.join(dir, 'flow.json'), prefix, roles: ['model', 'tool'] });
  core = await startCoreWorker({ nc, flowPath: path.join(dir, 'flow.json'), prefix, owner: 'core-window', leaseMs: 2000 });
});

afterAll(async () => {
  await core?.close().catch(() => undefined);
  await actors?.close().catch(() => undefined);
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

describe('contextTokens on a cluster', () => {
  it('refuses a run whose input overflows the window, leaving no log', async () => {
    await expect(startRemoteRun({ nc, prefix, input: long.repeat(3), traceId: 'too-long-1' })).rejects.toMatchObject({ code: ErrorCode.CONTEXT_BUDGET_EXCEEDED });
    const store = await openJetStreamEventStore(nc, { prefix });
    await expect(store.read('too-long-1')).rejects.toMatchObject({ code: ErrorCode.LOG_NOT_FOUND });
    await store.close();
  });

  it('fits each request the core worker builds into the window, and logs what it left out', async () => {
    const run = await startRemoteRun({ nc, prefix, input: 'bump three times', traceId: 'fits-1' });
    const result = await run.result;
    expect(result.outcome.status).toBe('done');
    const store = await openJetStreamEventStore(nc, { prefix });
    const { events } = await store.read('fits-1');
    await store.close();
    const omitted = events.filter((e) => e.type === 'model.requested').map((e) => (e.data as { omittedMessages?: number }).omittedMessages ?? 0);
    expect(omitted[0]).toBe(0);
    expect(Math.max(...omitted)).toBeGreaterThan(0);
  });
});
