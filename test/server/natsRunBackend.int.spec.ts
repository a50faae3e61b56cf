import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import { ErrorCode } from '../../src/errors.js';
import { isTerminal, type AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { createNatsRunBackend } from '../../src/nats/serve/natsRunBackend.js';
import { listRunStarts } from '../../src/nats/serve/natsRunList.js';
import type { BackendStartRequest, RunBackend } from '../../src/server/runBackend.js';
import { answer, countingTool, runScripted } from '../support/harness.js';
import { connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix } from '../distributed/clusterSupport.js';
import { createRedflowServer } from '../../src/server/server.js';
import type { RunResponse } from '../../src/server/apiTypes.js';
import { openSse, tempDirs, type SseReader } from './serverHarness.js';

// `redflow serve --nats`'s backend against a real nats-server, with a core worker and a
// model/tool worker running in this process (as the other distributed integration tests do):
// the flow's tool waits at a gate the test holds, so runs can be caught mid-way.

const flowsDir = path.join(ROOT, 'test/fixtures/natsBackend/flows');
const prefix = uniquePrefix();
const gateHolder = globalThis as { __natsBackendGate?: Promise<void> };

let clientNc: NatsConnection;
let coreNc: NatsConnection;
let actorNc: NatsConnection;
let core: CoreWorker;
let actors: ActorWorker;
let backend: RunBackend;
const flows: Record<string, FlowDefinition> = {};

beforeAll(async () => {
  [clientNc, coreNc, actorNc] = await Promise.all([connectTestServer('serve'), connectTestServer('core'), connectTestServer('actors')]);
  for (const id of ['gated', 'other']) {
    flows[id] = JSON.parse(await readFile(path.join(flowsDir, `${id}.json`), 'utf8')) as FlowDefinition;
  }
  const flowPath = path.join(flowsDir, 'gated.json');
  actors = await startActorWorker({ nc: actorNc, flowPath, prefix, roles: ['model', 'tool'] });
  core = await startCoreWorker({ nc: coreNc, flowPath, prefix, owner: 'core-1', leaseMs: 1000 });
  backend = await createNatsRunBackend({ nc: clientNc, prefix, flowsDir });
});

afterAll(async () => {
  gateHolder.__natsBackendGate = undefined;
  await backend?.close();
  await core?.close();
  await actors?.close();
  await removePrefix(clientNc, prefix);
  await Promise.all([clientNc, coreNc, actorNc].map((nc) => nc.drain()));
});

/** Holds every tool call until the returned function is called. */
function holdGate(): () => void {
  let open: () => void = () => undefined;
  gateHolder.__natsBackendGate = new Promise<void>((resolve) => (open = resolve));
  return () => {
    gateHolder.__natsBackendGate = undefined;
    open();
  };
}

function startRequest(flowId: string, input: unknown, extra: Partial<BackendStartRequest> = {}): BackendStartRequest {
  return { flowId, flowPath: path.join(flowsDir, `${flowId}.json`), flow: flows[flowId] as FlowDefinition, input, ...extra };
}

/** Follows a run until its last event; resolves with what was delivered. */
async function followToEnd(traceId: string, afterSeq: number, on: RunBackend = backend): Promise<AgentEvent[]> {
  const delivered: AgentEvent[] = [];
  // Following from the end of a finished run delivers nothing and ends: there is nothing to wait for.
  for await (const event of on.follow(traceId, afterSeq)) delivered.push(event);
  return delivered;
}

/** Resolves once the run's stored log holds an event of `type`; with that event. */
async function storedEvent(traceId: string, type: AgentEvent['type']): Promise<AgentEvent> {
  let found: AgentEvent | undefined;
  const deadline = Date.now() + 5000;
  while (!found) {
    found = (await backend.events(traceId, 0))?.find((event) => event.type === type);
    if (Date.now() > deadline) throw new Error(`no ${type} in run ${traceId}`);
    if (!found) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return found;
}

const seqs = (events: readonly AgentEvent[]) => events.map((event) => event.seq);

describe('the NATS run backend', () => {
  it('should start a run on the cluster, follow it live from its first event, and fold its log', async () => {
    const release = holdGate();
    const { traceId } = await backend.start(startRequest('gated', 'go'));
    // start resolves once the first event is stored.
    expect((await backend.events(traceId, 0))?.[0]?.type).toBe('run.started');
    const following = followToEnd(traceId, 0);
    await storedEvent(traceId, 'tool.requested');
    const underWay = await backend.get(traceId);
    expect(underWay).toMatchObject({ traceId, status: 'running', flow: 'gated' });
    expect(underWay?.outcome).toBeUndefined();
    release();
    const delivered = await following;
    const stored = (await backend.events(traceId, 0)) ?? [];
    expect(delivered).toEqual(stored);
    expect(seqs(delivered)).toEqual(stored.map((_, i) => i + 1));

    const run = await backend.get(traceId);
    expect(run).toMatchObject({
      traceId,
      status: 'finished',
      flow: 'gated',
      iterations: 3,
      lastSeq: stored.length,
      outcome: { status: 'done', reason: 'final_answer', answer: 'two steps taken' },
    });
    expect(run?.envelope).toEqual(fold(stored));
    expect(run?.startedAt).toBe(run?.envelope.observability.startedAt);
  });

  it('should follow a run from the middle without losing or repeating an event', async () => {
    const release = holdGate();
    const { traceId } = await backend.start(startRequest('gated', 'middle'));
    const requested = await storedEvent(traceId, 'tool.requested');
    const afterSeq = requested.seq - 1;
    const following = followToEnd(traceId, afterSeq);
    release();
    const delivered = await following;
    const stored = (await backend.events(traceId, 0)) ?? [];
    expect(seqs(delivered)).toEqual(seqs(stored).filter((seq) => seq > afterSeq));
    expect(delivered).toEqual(await backend.events(traceId, afterSeq));
    // And once it has ended: all of it from the store, then the follow stops by itself.
    expect(await followToEnd(traceId, 0)).toEqual(stored);
    expect(await followToEnd(traceId, stored.length)).toEqual([]);
  });

  it('should answer undefined for an unknown trace id, or one that is not a trace id, and follow neither', async () => {
    for (const traceId of ['never-started', 'a.b', '>', '*', '']) {
      await expect(backend.get(traceId)).resolves.toBeUndefined();
      await expect(backend.events(traceId, 0)).resolves.toBeUndefined();
      await expect(backend.abort(traceId)).resolves.toBe('unknown');
    }
    // A trace id that is not one would be a wildcard over every run's subjects: refused.
    for (const traceId of ['a.b', '>', '*', '']) {
      await expect(followToEnd(traceId, 0)).rejects.toMatchObject({ code: ErrorCode.LOG_NOT_FOUND });
    }
    // One that may yet start is waited for, until the follower stops.
    const controller = new AbortController();
    const delivered: AgentEvent[] = [];
    const waiting = (async () => {
      for await (const event of backend.follow('never-started', 0, { signal: controller.signal })) delivered.push(event);
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    await waiting;
    expect(delivered).toEqual([]);
  });

  it('should list the newest runs first, by flow, with their status', async () => {
    const first = await backend.start(startRequest('gated', 'list 1'));
    await followToEnd(first.traceId, 0);
    const release = holdGate();
    const second = await backend.start(startRequest('gated', 'list 2'));
    await storedEvent(second.traceId, 'tool.requested');
    try {
      const runs = await backend.list({ limit: 50 });
      expect(runs.slice(0, 2).map((run) => [run.traceId, run.status])).toEqual([
        [second.traceId, 'running'],
        [first.traceId, 'finished'],
      ]);
      expect(runs.every((run) => !('envelope' in run))).toBe(true);
      expect(runs.find((run) => run.traceId === first.traceId)).toMatchObject({ flow: 'gated', outcome: { reason: 'final_answer' }, iterations: 3 });
      expect((await backend.list({ limit: 1 })).map((run) => run.traceId)).toEqual([second.traceId]);
      expect((await backend.list({ flow: 'gated', limit: 50 })).map((run) => run.traceId)).toEqual(runs.map((run) => run.traceId));
      expect(await backend.list({ flow: 'other', limit: 50 })).toEqual([]);
      // Read backwards in windows of two stream messages: the same runs, in the same order.
      const all = await listRunStarts(clientNc, { prefix, limit: 50 });
      const windowed = await listRunStarts(clientNc, { prefix, limit: 50, firstWindow: 2 });
      expect(windowed.map((started) => started.traceId)).toEqual(all.map((started) => started.traceId));
      expect(all.map((started) => started.traceId)).toEqual(runs.map((run) => run.traceId));
    } finally {
      release();
    }
    await followToEnd(second.traceId, 0);
  });

  it('should list nothing for a prefix without runs', async () => {
    await expect(listRunStarts(clientNc, { prefix: uniquePrefix(), limit: 10 })).resolves.toEqual([]);
  });

  it('should abort a running run through the core worker that owns it', async () => {
    const release = holdGate();
    try {
      const { traceId } = await backend.start(startRequest('gated', 'abort me'));
      const following = followToEnd(traceId, 0);
      await storedEvent(traceId, 'tool.requested');
      await expect(backend.abort(traceId, 'the user changed their mind')).resolves.toBe('aborting');
      const delivered = await following;
      expect(delivered.at(-1)?.type).toBe('run.failed');
      const run = await backend.get(traceId);
      expect(run).toMatchObject({ status: 'finished', outcome: { status: 'blocked', reason: 'aborted', error: { code: ErrorCode.RUN_ABORTED } } });
      expect(run?.outcome?.error?.message).toContain('the user changed their mind');
      await expect(backend.abort(traceId)).resolves.toBe('finished');
      await eventually(() => !core.runs().includes(traceId));
    } finally {
      release();
    }
  });

  it('should refuse an abort reason longer than a thousand characters', async () => {
    await expect(backend.abort('never-started', 'x'.repeat(1001))).rejects.toMatchObject({ code: ErrorCode.HTTP_BODY_INVALID });
  });

  it('should pass FLOW_MISMATCH on when the workers run another flow', async () => {
    const refused = await backend.start(startRequest('other', 'wrong flow')).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: ErrorCode.FLOW_MISMATCH });
    expect((refused as Error).message).toContain('nats-backend-gated');
    expect((refused as Error).message).toContain('nats-backend-other');
  });

  it("should end a run at the client's timeout", async () => {
    const release = holdGate();
    try {
      const { traceId } = await backend.start(startRequest('gated', 'slow', { timeoutMs: 300 }));
      await followToEnd(traceId, 0);
      expect((await backend.get(traceId))?.outcome).toMatchObject({ status: 'blocked', reason: 'timeout' });
    } finally {
      release();
    }
  });

  it('should call a run interrupted when its log stops early and no core worker owns it', async () => {
    const { events } = await runScripted({ answers: [answer.tool('echo', { text: 'x' }), answer.final('done')], tools: [countingTool('echo').tool] });
    const store = await openJetStreamEventStore(clientNc, { prefix });
    for (const event of events.slice(0, 3)) await store.append(event);
    await store.close();
    const traceId = events[0]?.traceId as string;
    expect(await backend.get(traceId)).toMatchObject({ traceId, status: 'interrupted', lastSeq: 3 });
    expect((await backend.list({ limit: 1 }))[0]).toMatchObject({ traceId, status: 'interrupted' });
    const impatient = await createNatsRunBackend({ nc: clientNc, prefix, flowsDir, abortPatienceMs: 300 });
    try {
      await expect(impatient.abort(traceId)).rejects.toMatchObject({ code: ErrorCode.TRANSPORT_NO_RESPONDER });
      // Another server sees the same runs, named by the flows directory (the logs hold the flow file's own id).
      const seen = await impatient.list({ limit: 50 });
      expect(seen.map((run) => run.traceId)).toEqual((await backend.list({ limit: 50 })).map((run) => run.traceId));
      const gated = await impatient.list({ flow: 'gated', limit: 50 });
      expect(gated.length).toBeGreaterThanOrEqual(5);
      expect(gated.every((run) => run.flow === 'gated')).toBe(true);
      expect(seen.find((run) => run.traceId === traceId)?.flow).toBeUndefined();
    } finally {
      await impatient.close();
    }
  });

  it('should read runs under a prefix where no core worker has ever run', async () => {
    const lonely = uniquePrefix();
    const { events } = await runScripted({ answers: [answer.final('done')] });
    const store = await openJetStreamEventStore(clientNc, { prefix: lonely });
    for (const event of events.slice(0, 2)) await store.append(event);
    await store.close();
    const elsewhere = await createNatsRunBackend({ nc: clientNc, prefix: lonely, flowsDir, abortPatienceMs: 300 });
    try {
      expect(await elsewhere.get('trace-1')).toMatchObject({ status: 'interrupted', lastSeq: 2 });
      expect((await elsewhere.list({ limit: 5 })).map((run) => run.traceId)).toEqual(['trace-1']);
      await expect(elsewhere.abort('trace-1')).rejects.toMatchObject({ code: ErrorCode.TRANSPORT_NO_RESPONDER });
      await expect(elsewhere.start(startRequest('gated', 'nobody there'))).rejects.toMatchObject({ code: ErrorCode.TRANSPORT_NO_RESPONDER });
    } finally {
      await elsewhere.close();
      await removePrefix(clientNc, lonely);
    }
  });

  it('should stop following when closed, and leave the connection open', async () => {
    const release = holdGate();
    const other = await createNatsRunBackend({ nc: clientNc, prefix, flowsDir });
    try {
      const { traceId } = await other.start(startRequest('gated', 'close'));
      const delivered: AgentEvent[] = [];
      const following = (async () => {
        for await (const event of other.follow(traceId, 0)) delivered.push(event);
      })();
      await storedEvent(traceId, 'tool.requested');
      await eventually(() => delivered.some((event) => event.type === 'tool.requested'));
      await other.close();
      // The follow ends with the backend, before the run does.
      await following;
      expect(delivered.some(isTerminal)).toBe(false);
      const before = delivered.length;
      release();
      await followToEnd(traceId, 0);
      expect(delivered).toHaveLength(before);
      expect(clientNc.isClosed()).toBe(false);
    } finally {
      release();
    }
  });
});

describe('the run stream over the NATS backend', () => {
  const dirs = tempDirs();
  afterAll(() => dirs.cleanup());

  /** `redflow serve` over its own NATS backend (closing the server closes it), on a real socket. */
  async function serveNats() {
    const root = await dirs.make();
    const own = await createNatsRunBackend({ nc: clientNc, prefix, flowsDir });
    return createRedflowServer({ backend: own, flowsDir, editorDir: path.join(root, 'editor'), port: 0, env: {} });
  }
  const endOf = async (reader: SseReader) => JSON.parse((await reader.waitFor((f) => f.event === 'end', 15_000)).data ?? '') as RunResponse;
  const streamed = (reader: SseReader) => reader.frames.filter((f) => f.event === 'agent-event');

  it('should end a stream whose cursor is at or past the end of the log once the run ends, and at once after', async () => {
    // Run the flow to its end once, unheld, to learn the seq its last event will have.
    const finalSeq = (await followToEnd((await backend.start(startRequest('gated', 'measure'))).traceId, 0)).length;
    const server = await serveNats();
    const release = holdGate();
    try {
      const { traceId } = await backend.start(startRequest('gated', 'past the end'));
      await storedEvent(traceId, 'tool.requested');
      const readers = await Promise.all([
        openSse(server, `/api/runs/${traceId}/stream`, { 'last-event-id': '99999' }),
        openSse(server, `/api/runs/${traceId}/stream`, { 'last-event-id': String(finalSeq) }),
        openSse(server, `/api/runs/${traceId}/stream?after=99999`),
        openSse(server, `/api/runs/${traceId}/stream?after=${finalSeq}`),
      ]);
      expect(await backend.get(traceId)).toMatchObject({ status: 'running' });
      release();
      for (const reader of readers) {
        expect(await endOf(reader)).toMatchObject({ traceId, status: 'finished', lastSeq: finalSeq, outcome: { answer: 'two steps taken' } });
        await reader.ended;
        expect(streamed(reader)).toEqual([]);
      }

      const afterwards = await openSse(server, `/api/runs/${traceId}/stream`, { 'last-event-id': '99999' });
      expect(await endOf(afterwards)).toMatchObject({ status: 'finished', lastSeq: finalSeq });
      await afterwards.ended;
      expect(streamed(afterwards)).toEqual([]);
    } finally {
      release();
      await server.close();
    }
  });
});
