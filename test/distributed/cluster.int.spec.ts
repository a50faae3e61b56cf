import path from 'node:path';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix } from './clusterSupport.js';

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
const calls = () => ((globalThis as { __clusterCalls?: string[] }).__clusterCalls ??= []);

let clientNc: NatsConnection;
let actorNc: NatsConnection;
let actors: ActorWorker;
const cores: { nc: NatsConnection; worker: CoreWorker }[] = [];

async function core(owner: string, leaseMs = 600): Promise<CoreWorker> {
  const nc = await connectTestServer(owner);
  const worker = await startCoreWorker({ nc, flowPath, prefix, owner, leaseMs });
  cores.push({ nc, worker });
  return worker;
}

beforeAll(async () => {
  clientNc = await connectTestServer('client');
  actorNc = await connectTestServer('actors');
  actors = await startActorWorker({ nc: actorNc, flowPath, prefix, roles: ['model', 'tool', 'memory'] });
});

afterAll(async () => {
  for (const { nc, worker } of cores) {
    await worker.close().catch(() => undefined);
    await nc.drain().catch(() => undefined);
  }
  await actors.close();
  await removePrefix(clientNc, prefix);
  await actorNc.drain();
  await clientNc.drain();
});

describe('distributed mode: core, model and tool workers connected only by NATS', () => {
  it('should run a flow on the cluster and show every event live', async () => {
    await core('core-a');
    const live: AgentEvent[] = [];
    const run = await startRemoteRun({ nc: clientNc, prefix, input: 'go', onEvent: (event) => live.push(event) });
    const { outcome, envelope } = await run.result;
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'bumped three times' });
    expect(envelope.tools.history).toHaveLength(3);
    const store = await openJetStreamEventStore(clientNc, { prefix });
    const { events } = await store.read(run.traceId);
    expect(live).toEqual(events);
    expect(fold(events)).toEqual(envelope);
  });

  it('should answer bad run start messages with an error, and go on serving', async () => {
    await (cores[0]?.worker ?? core('core-a'));
    const subject = `${prefix}.runs.start`;
    for (const payload of [new TextEncoder().encode('not json'), new TextEncoder().encode('[1,2]'), new TextEncoder().encode('{"traceId":{"x":1},"input":1}'), new TextEncoder().encode('{"noInput":true}'), new Uint8Array([0xff, 0xfe])]) {
      const reply = await clientNc.request(subject, payload, { timeout: 5000 });
      expect(reply.headers?.get('Redflow-Error')).toBeTruthy();
    }
    const run = await startRemoteRun({ nc: clientNc, prefix, input: 'still here' });
    expect((await run.result).outcome.reason).toBe('final_answer');
  });

  it('should refuse a start whose trace id is taken, by a finished run or one under way, and leave nothing behind', async () => {
    await (cores[0]?.worker ?? core('core-a'));
    const store = await openJetStreamEventStore(clientNc, { prefix });
    const finished = await startRemoteRun({ nc: clientNc, prefix, input: 'first' });
    await finished.result;
    const logged = (await store.read(finished.traceId)).events;
    await expect(startRemoteRun({ nc: clientNc, prefix, input: 'again', traceId: finished.traceId })).rejects.toMatchObject({
      code: ErrorCode.RUN_TRACE_ID_TAKEN,
      hint: expect.any(String),
    });
    // No run record was made for the refused start, and the finished run's log is as it was.
    const runs = await new Kvm(clientNc).open(Storage.runsBucket(prefix));
    expect((await runs.get(finished.traceId))?.operation).not.toBe('PUT');
    expect((await store.read(finished.traceId)).events).toEqual(logged);

    const running = await startRemoteRun({ nc: clientNc, prefix, input: 'under way' });
    await expect(startRemoteRun({ nc: clientNc, prefix, input: 'again', traceId: running.traceId })).rejects.toMatchObject({
      code: ErrorCode.RUN_TRACE_ID_TAKEN,
    });
    expect((await running.result).outcome.reason).toBe('final_answer');
  });

  it('should answer bad messages on the model and tool subjects with an error, and go on serving', async () => {
    const enc = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));
    const cases: [string, Uint8Array][] = [
      [`${prefix}.model.model`, enc('garbage')],
      [`${prefix}.model.model`, enc({ traceId: 't', iteration: 1, messages: 'not a list' })],
      [`${prefix}.tool.bump`, enc({ traceId: 't', iteration: 1, tool: 'bump', input: { by: 'three' }, idempotencyKey: 't:1' })],
      [`${prefix}.tool.bump`, enc({ tool: 'other', input: {}, idempotencyKey: 't:1', traceId: 't', iteration: 1 })],
      [`${prefix}.tool.bump`, new Uint8Array([0xc3, 0x28])],
    ];
    for (const [subject, payload] of cases) {
      const reply = await clientNc.request(subject, payload, { timeout: 5000 });
      expect(reply.headers?.get('Redflow-Error'), subject).toBeTruthy();
    }
    const run = await startRemoteRun({ nc: clientNc, prefix, input: 'after the garbage' });
    expect((await run.result).outcome.reason).toBe('final_answer');
  });

  it('should have another core worker take over a run whose worker stopped, without repeating a completed tool call', async () => {
    const first = cores[0]?.worker ?? (await core('core-a'));
    const before = calls().length;
    const live: AgentEvent[] = [];
    const run = await startRemoteRun({ nc: clientNc, prefix, input: 'go', onEvent: (event) => live.push(event) });
    // Let the first tool call complete, then the owner goes away without a word.
    await eventually(() => live.some((e) => e.type === 'tool.completed'), 5000);
    const owner = cores.find((c) => c.worker.runs().includes(run.traceId));
    expect(owner?.worker).toBe(first);
    await first.close();
    const started = Date.now();
    await core('core-b');
    const { outcome } = await run.result;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(outcome.reason).toBe('final_answer');
    const mine = calls().slice(before).filter((key) => key.startsWith(`${run.traceId}:`));
    // Each iteration's call ran once, or twice only for the one in flight when the owner stopped.
    expect(new Set(mine).size).toBe(3);
    const store = await openJetStreamEventStore(clientNc, { prefix });
    const { events } = await store.read(run.traceId);
    expect(events.filter((e) => e.type === 'run.resumed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool.completed')).toHaveLength(3);
  }, 20_000);

  it('should let exactly one of two core workers take over an orphaned run, every time', async () => {
    await core('core-race-b');
    await core('core-race-c');
    const store = await openJetStreamEventStore(clientNc, { prefix });
    for (let i = 0; i < 10; i++) {
      const doomed = await core(`core-doomed-${i}`);
      const live: AgentEvent[] = [];
      // Any core worker of the queue group may take a start: start runs until the doomed one owns one.
      // NATS picks a queue member at random: with 5 members, 20 tries all miss it 1% of the time, and
      // the test makes 10 such draws; 100 tries miss it once in billions.
      let traceId = '';
      for (let attempt = 0; attempt < 100 && !traceId; attempt++) {
        const run = await startRemoteRun({ nc: clientNc, prefix, input: 'race', onEvent: (event) => live.push(event) });
        if (doomed.runs().includes(run.traceId)) traceId = run.traceId;
        else await run.result;
      }
      expect(traceId, 'the doomed worker got a run').not.toBe('');
      await eventually(() => live.some((e) => e.traceId === traceId && e.type === 'tool.requested'), 5000);
      await doomed.close();
      // The other core workers (at least b and c) race for it.
      await eventually(() => live.some((e) => e.traceId === traceId && e.type === 'run.completed'), 10_000);
      const { events } = await store.read(traceId);
      expect(events.filter((e) => e.type === 'run.resumed')).toHaveLength(1);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, k) => k + 1));
    }
  }, 120_000);
});
