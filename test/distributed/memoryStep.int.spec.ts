import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { createNatsKvMemoryStore } from '../../src/nats/kv/natsKvMemoryStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix } from './clusterSupport.js';

// The conversation's turn is a step of the run on a cluster too: a core worker that goes away
// right after logging the save leaves it to the worker that takes the run over, which saves the
// turn once and records the ending.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow-memory.json');
const prefix = uniquePrefix();
const connections: NatsConnection[] = [];
const workers: { close(): Promise<void> }[] = [];
let client: NatsConnection;
let actors: ActorWorker;

async function connection(name: string): Promise<NatsConnection> {
  const nc = await connectTestServer(name);
  connections.push(nc);
  return nc;
}

async function core(owner: string, onEvent?: (event: AgentEvent) => void): Promise<CoreWorker> {
  const worker = await startCoreWorker({ nc: await connection(owner), flowPath, prefix, owner, leaseMs: 600, ...(onEvent && { onEvent }) });
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  client = await connection('memory-client');
  actors = await startActorWorker({ nc: await connection('memory-actors'), flowPath, prefix, roles: ['model', 'tool', 'memory'] });
  workers.push(actors);
});

afterAll(async () => {
  for (const worker of workers) await worker.close().catch(() => undefined);
  await removePrefix(client, prefix);
  for (const nc of connections) await nc.drain().catch(() => undefined);
});

describe('the memory step on a cluster', () => {
  it('should log the save before the ending and keep the turn in the memory bucket', async () => {
    const only = await core('memory-core-a');
    const run = await startRemoteRun({ nc: client, prefix, input: 'first', conversationId: 'conv-1' });
    expect((await run.result).outcome.reason).toBe('final_answer');
    await only.close(); // the next test's run must go to its own worker
    const { events } = await (await openJetStreamEventStore(client, { prefix })).read(run.traceId);
    expect(events.slice(-3).map((event) => event.type)).toEqual(['memory.requested', 'memory.saved', 'run.completed']);
    const memory = await createNatsKvMemoryStore(client, { bucket: Storage.memoryBucket(prefix) });
    expect(((await memory.load('conv-1'))?.turns as { traceId: string }[]).map((turn) => turn.traceId)).toEqual([run.traceId]);
  }, 20_000);

  it('should save the turn once when the owner goes away right after logging the save, and another worker takes the run over', async () => {
    let stopped!: (closing: Promise<void>) => void;
    const stopping = new Promise<Promise<void>>((resolve) => (stopped = resolve));
    const owner: CoreWorker = await core('memory-core-dying', (event) => {
      if (event.type === 'memory.requested') stopped(owner.close());
    });
    const run = await startRemoteRun({ nc: client, prefix, input: 'second', conversationId: 'conv-2' });
    await (await stopping);
    await core('memory-core-b');
    expect((await run.result).outcome).toMatchObject({ status: 'done', reason: 'final_answer', answer: 'bumped three times' });
    const { events } = await (await openJetStreamEventStore(client, { prefix })).read(run.traceId);
    const tail = events.slice(events.findIndex((event) => event.type === 'memory.requested')).map((event) => event.type);
    expect(tail).toEqual(['memory.requested', 'run.resumed', 'memory.saved', 'run.completed']);
    const memory = await createNatsKvMemoryStore(client, { bucket: Storage.memoryBucket(prefix) });
    expect(((await memory.load('conv-2'))?.turns as { traceId: string }[]).map((turn) => turn.traceId)).toEqual([run.traceId]);
  }, 30_000);
});
