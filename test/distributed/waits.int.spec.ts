// Runs that wait for an answer from outside, on a cluster (real nats-server with JetStream, core and
// actor workers in this process): a parked run holds no worker, the answer is taken by one core
// worker (of two answers at once, one), a worker that died after taking an answer leaves it to
// the next, and a wait past its deadline is ended by the workers' sweeper.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { requestRunAnswer } from '../../src/nats/cluster/runAnswers.js';
import type { RunRecord } from '../../src/nats/cluster/runLeases.js';
import { createNatsRunBackend } from '../../src/nats/serve/natsRunBackend.js';
import type { RunBackend } from '../../src/server/runBackend.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { echoEffects, waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';
import { removePrefix } from './clusterSupport.js';

/** A cluster of its own: a prefix, a flow, two core workers and an actor worker. */
interface Cluster {
  readonly prefix: string;
  readonly dir: string;
  readonly cores: CoreWorker[];
  readonly backend: RunBackend;
  close(): Promise<void>;
}

const connections: NatsConnection[] = [];
let client: NatsConnection;

async function connect(name: string): Promise<NatsConnection> {
  const nc = await connectTestServer(name);
  connections.push(nc);
  return nc;
}

async function cluster(answers: readonly unknown[], agent: Record<string, unknown> = {}): Promise<Cluster> {
  const prefix = uniquePrefix();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'redflow-cluster-waits-'));
  const flowPath = await writeWaitingFlow(dir, waitingFlow(answers, agent));
  const actors: ActorWorker = await startActorWorker({ nc: await connect('actors'), flowPath, prefix, roles: ['model', 'tool'] });
  const cores = [
    await startCoreWorker({ nc: await connect('core-a'), flowPath, prefix, owner: 'core-a', leaseMs: 600 }),
    await startCoreWorker({ nc: await connect('core-b'), flowPath, prefix, owner: 'core-b', leaseMs: 600 }),
  ];
  const backend = await createNatsRunBackend({ nc: client, prefix, flowsDir: dir });
  return {
    prefix,
    dir,
    cores,
    backend,
    async close() {
      await backend.close();
      for (const worker of cores) await worker.close().catch(() => undefined);
      await actors.close();
      await removePrefix(client, prefix);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const statusOf = (c: Cluster, traceId: string, status: string) =>
  until(`run ${traceId} ${status}`, async () => {
    const run = await c.backend.get(traceId);
    return run?.status === status ? run : undefined;
  });

async function events(c: Cluster, traceId: string): Promise<readonly AgentEvent[]> {
  const store = await openJetStreamEventStore(client, { prefix: c.prefix });
  return (await store.read(traceId)).events;
}

beforeAll(async () => {
  client = await connect('client');
});
afterAll(async () => {
  for (const nc of connections) await nc.drain().catch(() => undefined);
});

describe('waiting runs on a cluster', () => {
  it('should park a run with no worker holding it, take each answer once on some core worker, and finish once', async () => {
    const c = await cluster([waitAnswer.ask(), waitAnswer.echo('hello'), waitAnswer.final('echoed hello')]);
    try {
      const run = await startRemoteRun({ nc: client, prefix: c.prefix, input: 'hi' });
      const first = await statusOf(c, run.traceId, 'waiting');
      expect(first.waiting).toMatchObject({ kind: 'client', tool: 'ask_user', input: { question: 'which text?' } });
      // Parked: no core worker holds it.
      expect(c.cores.flatMap((worker) => worker.runs())).toEqual([]);

      await expect(c.backend.answer(run.traceId, { kind: 'approval', approved: true })).rejects.toMatchObject({ code: ErrorCode.RUN_NOT_WAITING });
      await expect(c.backend.answer('no-such-run', { kind: 'approval', approved: true })).resolves.toBe('unknown');
      await expect(c.backend.answer(run.traceId, { kind: 'client', result: { ok: true, output: 'hello' } })).resolves.toBe('answered');
      expect((await statusOf(c, run.traceId, 'waiting')).waiting).toMatchObject({ kind: 'approval', tool: 'echo' });

      // Two answers at once, through two core workers: one is taken, the other refused.
      const both = await Promise.allSettled([
        requestRunAnswer(client, c.prefix, run.traceId, { kind: 'approval', approved: true }),
        requestRunAnswer(client, c.prefix, run.traceId, { kind: 'approval', approved: false, reason: 'no' }),
      ]);
      expect(both.filter((answer) => answer.status === 'fulfilled')).toHaveLength(1);
      const refused = both.find((answer) => answer.status === 'rejected') as PromiseRejectedResult;
      expect([ErrorCode.WAIT_ALREADY_ANSWERED, ErrorCode.RUN_NOT_WAITING]).toContain((refused.reason as { code: string }).code);

      const done = await statusOf(c, run.traceId, 'finished');
      const logged = await events(c, run.traceId);
      const decisions = logged.filter((event) => event.type === 'tool.approved' || event.type === 'tool.denied');
      expect(decisions).toHaveLength(1);
      // The answer taken decides: approved, the echo ran once and its answer ends the run; denied, it never ran.
      const approved = decisions[0]?.type === 'tool.approved';
      expect(await echoEffects(c.dir)).toEqual(approved ? [`${run.traceId}:2`] : []);
      expect(done.outcome).toMatchObject(approved ? { status: 'done', answer: 'echoed hello' } : {});
      expect(logged.filter((event) => event.type === 'run.completed' || event.type === 'run.failed')).toHaveLength(1);
      // The run's record is gone with the run.
      const runs = await new Kvm(client).open(Storage.runsBucket(c.prefix));
      expect((await runs.get(run.traceId))?.operation).not.toBe('PUT');
    } finally {
      await c.close();
    }
  });

  it('should resume, with its answer, a run whose core worker died after taking the answer', async () => {
    const c = await cluster([waitAnswer.echo('after a death'), waitAnswer.final('done')]);
    try {
      const run = await startRemoteRun({ nc: client, prefix: c.prefix, input: 'hi' });
      await statusOf(c, run.traceId, 'waiting');
      // What a worker writes when it claims the run with an answer, then it dies before resuming it.
      const runs = await new Kvm(client).open(Storage.runsBucket(c.prefix));
      const entry = await runs.get(run.traceId);
      const record = entry?.json<RunRecord>() as RunRecord;
      const { waiting: _waiting, ...rest } = record;
      const claimed: RunRecord = { ...rest, owner: 'core-that-died', answer: { kind: 'approval', approved: true, reason: 'claimed, then the worker died' } };
      await runs.update(run.traceId, new TextEncoder().encode(JSON.stringify(claimed)), entry?.revision ?? 0);
      const done = await statusOf(c, run.traceId, 'finished');
      expect(done.outcome).toMatchObject({ status: 'done', answer: 'done' });
      const approved = (await events(c, run.traceId)).find((event) => event.type === 'tool.approved');
      expect(approved?.data).toMatchObject({ reason: 'claimed, then the worker died' });
      expect(await echoEffects(c.dir)).toEqual([`${run.traceId}:1`]);
    } finally {
      await c.close();
    }
  });

  it('should abort a parked run, which no worker holds to hear its abort subject', async () => {
    const c = await cluster([waitAnswer.echo('x'), waitAnswer.final('never')]);
    try {
      const run = await startRemoteRun({ nc: client, prefix: c.prefix, input: 'hi' });
      await statusOf(c, run.traceId, 'waiting');
      await expect(c.backend.abort(run.traceId, 'not needed')).resolves.toBe('aborting');
      const { outcome } = await run.result;
      expect(outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
      expect(await echoEffects(c.dir)).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('should end a wait past its deadline on the cluster, with WAIT_EXPIRED', async () => {
    const c = await cluster([waitAnswer.ask(), waitAnswer.final('never')], { waitTimeoutMs: 500 });
    try {
      const run = await startRemoteRun({ nc: client, prefix: c.prefix, input: 'hi' });
      const { outcome } = await run.result;
      expect(outcome).toMatchObject({ status: 'blocked', reason: 'wait_expired', error: { code: ErrorCode.WAIT_EXPIRED } });
      await expect(c.backend.answer(run.traceId, { kind: 'client', result: { ok: true, output: 'late' } })).rejects.toMatchObject({
        code: ErrorCode.RUN_ALREADY_FINISHED,
      });
    } finally {
      await c.close();
    }
  });
});
