import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage, Subject } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { subagentPrefix } from '../../src/nats/cluster/clusterSubagents.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { parseTraceEvents } from '../../src/nats/cluster/traceEvent.js';
import { requestRunAbort } from '../../src/nats/cluster/runAborts.js';
import { flowsToHost } from '../../src/nats/cluster/subagentFlows.js';
import { NATS_URL, connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { printRunTree } from '../../src/cli/replayTree.js';
import { readClusterLog } from '../../src/cli/clusterRun.js';
import { createNatsRunBackend } from '../../src/nats/serve/natsRunBackend.js';
import { ROOT, removePrefix } from './clusterSupport.js';

/**
 * Subagents on a cluster: the parent's core workers call the subagent like a tool, its tool
 * workers start the subagent's run on the core workers of its own prefix, and follow it.
 */

const parentFlow = path.join(ROOT, 'test/fixtures/subagents/parent.json');

let dir: string;
let nc: NatsConnection;
const closers: (() => Promise<void>)[] = [];
const prefixes: string[] = [];

/** Hosts a flow and its subagents on `prefix` in this process, every role, as `redflow worker` does. */
async function host(flowPath: string, prefix: string, allowFiles: readonly string[] = []): Promise<void> {
  for (const hosted of await flowsToHost(flowPath, prefix, allowFiles)) {
    prefixes.push(hosted.prefix);
    const serveTool = await idempotentToolServer(nc, hosted.prefix);
    const actors = await startActorWorker({ nc, flowPath: hosted.flowPath, prefix: hosted.prefix, roles: ['model', 'tool', 'memory'], allowFiles: hosted.allowFiles, serveTool });
    const core = await startCoreWorker({ nc, flowPath: hosted.flowPath, prefix: hosted.prefix, allowFiles: hosted.allowFiles, leaseMs: 1000 });
    closers.push(() => core.close(), () => actors.close());
  }
}

async function storedEvents(prefix: string, traceId: string): Promise<AgentEvent[]> {
  const store = await openJetStreamEventStore(nc, { prefix });
  const read = await store.read(traceId);
  await store.close();
  expect(read.problems).toEqual([]);
  return [...read.events];
}

/** The trace ids of every run started on `prefix`, from its trace stream's subjects. */
async function runsStarted(prefix: string): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(Storage.traceStream(prefix), { subjects_filter: Subject.log(prefix, '*', 'run.started') });
  return Object.keys(info.state.subjects ?? {})
    .map((subject) => subject.split('.').at(-3) ?? '')
    .sort();
}

/** A tool that never answers until its call is aborted. */
const HANG = `export default { name: 'hang', description: 'waits', inputSchema: { type: 'object' },
  execute(input, { signal }) { return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))); } };`;

/** Writes a parent flow calling the subagent flow `child` (its answers, its one tool's module). */
async function parentWith(folder: string, parentAnswers: unknown[], childAnswers: unknown[], tool: string): Promise<string> {
  const base = path.join(dir, folder);
  await mkdir(path.join(base, 'child'), { recursive: true });
  await writeFile(path.join(base, 'child', 'tool.mjs'), tool);
  const flowOf = (answers: unknown[], capability: Record<string, unknown>) => ({
    nodes: [
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 4 } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers } },
      capability,
    ],
    edges: [
      { id: 'e1', source: 'agent', target: 'model' },
      { id: 'e2', source: 'agent', target: capability.id as string },
    ],
  });
  await writeFile(path.join(base, 'child', 'flow.json'), JSON.stringify(flowOf(childAnswers, { id: 'hang', type: 'tool.module', config: { module: 'tool.mjs' } })));
  const file = path.join(base, 'flow.json');
  await writeFile(file, JSON.stringify(flowOf(parentAnswers, { id: 'child', type: 'agent.ref', config: { flow: 'child/flow.json' } })));
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cluster-subagents-'));
  process.env.COUNTER_FILE = path.join(dir, 'count');
  nc = await connectTestServer('subagents');
});

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  for (const prefix of prefixes) await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

describe('subagents on a cluster', () => {
  it('should run each call of the subagent as a run on its own prefix, linked both ways, each once', async () => {
    const prefix = uniquePrefix();
    await host(parentFlow, prefix);
    const childPrefix = subagentPrefix(prefix, 'counter');
    expect(prefixes).toEqual([prefix, childPrefix]);
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'cl' });
    const { outcome, envelope } = await run.result;
    expect(outcome).toMatchObject({ status: 'done', answer: 'the counter counted twice, twice' });
    expect(envelope.tools.history.map((call) => [call.childTraceId, call.status, call.output])).toEqual([
      ['cl-1', 'succeeded', { status: 'done', reason: 'final_answer', answer: 'counted to two' }],
      ['cl-2', 'succeeded', { status: 'done', reason: 'final_answer', answer: 'counted to two' }],
    ]);
    const parent = await storedEvents(prefix, 'cl');
    expect(fold(parent)).toEqual(envelope);
    for (const [iteration, child] of [[1, 'cl-1'], [2, 'cl-2']] as const) {
      const events = await storedEvents(childPrefix, child);
      expect(events[0]?.type === 'run.started' && events[0].data).toMatchObject({
        parent: { traceId: 'cl', iteration, idempotencyKey: `cl:${iteration}`, tool: 'counter' },
        flow: { id: 'subagent-counter' },
        timeoutMs: 300_000,
      });
      expect(events.filter((event) => event.type === 'run.started')).toHaveLength(1);
      expect(fold(events).observability.outcome).toMatchObject({ status: 'done', answer: 'counted to two' });
    }
    // No child run under the parent's own prefix: each flow has its prefix.
    await expect(openJetStreamEventStore(nc, { prefix }).then((store) => store.read('cl-1'))).rejects.toMatchObject({ code: ErrorCode.LOG_NOT_FOUND });
    const counted = (await readFile(path.join(dir, 'count'), 'utf8')).split('\n').filter(Boolean);
    expect(counted).toEqual(['cl-1:1', 'cl-1:2', 'cl-2:1', 'cl-2:2']);
    // replay --tree --nats reads each subagent run from its prefix.
    let printed = '';
    const out = new Writable({ write: (chunk: Buffer, _encoding, done) => ((printed += chunk.toString()), done()) });
    expect(await printRunTree('cl', { nats: NATS_URL, prefix }, false, { out, err: out, color: false })).toBe(0);
    expect(printed.trim().split('\n')).toEqual([
      'run cl  done (final_answer)  12 events',
      '├─ #1 counter → run cl-1  done (final_answer)  12 events',
      '└─ #2 counter → run cl-2  done (final_answer)  12 events',
    ]);
    // replay <child trace id> --nats finds the subagent's run on its prefix through its caller's log.
    const child = await readClusterLog({ nats: NATS_URL, prefix }, 'cl-2');
    expect(fold(child.events).observability.outcome).toMatchObject({ status: 'done', answer: 'counted to two' });
    expect(child.events[0]?.traceId).toBe('cl-2');
    // redflow serve --nats (the editor's API) opens a subagent's run too: read, events, follow.
    const backend = await createNatsRunBackend({ nc, prefix, flowsDir: path.dirname(parentFlow) });
    try {
      expect(await backend.get('cl-1')).toMatchObject({ traceId: 'cl-1', status: 'finished', outcome: { status: 'done', answer: 'counted to two' } });
      expect((await backend.events('cl-1', 10))?.map((event) => event.seq)).toEqual([11, 12]);
      const followed: number[] = [];
      for await (const event of backend.follow('cl-2', 0)) followed.push(event.seq);
      expect(followed).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(await backend.get('cl-9')).toBeUndefined();
      expect(await backend.abort('cl-1')).toBe('finished');
    } finally {
      await backend.close();
    }
  });

  it('should follow the run a call sent again finds, instead of starting another: one child run per call', async () => {
    const prefix = uniquePrefix();
    await host(parentFlow, prefix);
    const childPrefix = subagentPrefix(prefix, 'counter');
    // The call's run was started before (a tool worker that died after starting it): it is under
    // way or ended, and the call, sent again, must take its outcome.
    const before = await startRemoteRun({
      nc,
      prefix: childPrefix,
      input: 'count to two',
      traceId: 'again-1',
      // What the first attempt of the call sent.
      parent: { traceId: 'again', iteration: 1, idempotencyKey: 'again:1', tool: 'counter' },
    });
    await before.result.catch(() => undefined);
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'again' });
    const { envelope } = await run.result;
    expect(envelope.tools.history.map((call) => [call.childTraceId, call.output])).toEqual([
      ['again-1', { status: 'done', reason: 'final_answer', answer: 'counted to two' }],
      ['again-2', { status: 'done', reason: 'final_answer', answer: 'counted to two' }],
    ]);
    // Two calls, two runs on the subagent's prefix: the one found, and the one the second call started.
    expect(await runsStarted(childPrefix)).toEqual(['again-1', 'again-2']);
  });

  it("should fail a call whose trace id another call's run has taken with SUBAGENT_TRACE_TAKEN, and follow that run no further", async () => {
    const prefix = uniquePrefix();
    await host(parentFlow, prefix);
    const childPrefix = subagentPrefix(prefix, 'counter');
    const other = await startRemoteRun({
      nc,
      prefix: childPrefix,
      input: 'count to two',
      traceId: 'taken-1',
      parent: { traceId: 'someone-else', iteration: 1, idempotencyKey: 'someone-else:1', tool: 'counter' },
    });
    await other.result;
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'taken' });
    const { envelope } = await run.result;
    const [first, second] = envelope.tools.history;
    expect(first).toMatchObject({ childTraceId: 'taken-1', status: 'failed', error: { code: ErrorCode.SUBAGENT_TRACE_TAKEN } });
    expect(second).toMatchObject({ childTraceId: 'taken-2', status: 'succeeded' });
    expect(await runsStarted(childPrefix)).toEqual(['taken-1', 'taken-2']);
  });

  it('should abort the subagent run when the calling run is aborted', async () => {
    const prefix = uniquePrefix();
    const file = await parentWith('abort', [{ action: 'tool', tool: 'child', input: { task: 'wait' }, confidence: 0.5 }], [{ action: 'tool', tool: 'hang', input: {}, confidence: 0.5 }], HANG);
    await host(file, prefix);
    const childPrefix = subagentPrefix(prefix, 'child');
    const childEvents: AgentEvent[] = [];
    const follow = nc.subscribe(`${childPrefix}.trace.ab-1.>`, {
      callback: (_, message) => {
        childEvents.push(...(parseTraceEvents(message.data) ?? []));
      },
    });
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'ab' });
    await eventually(() => childEvents.some((event) => event.type === 'tool.requested'), 10_000);
    await requestRunAbort(nc, prefix, 'ab', { reason: 'enough' });
    expect((await run.result).outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
    await eventually(() => childEvents.some((event) => event.type === 'run.failed'), 10_000);
    follow.unsubscribe();
    expect(fold(await storedEvents(childPrefix, 'ab-1')).observability.outcome).toMatchObject({ status: 'blocked', reason: 'aborted', error: { code: ErrorCode.RUN_ABORTED } });
  });

  it('should never park a subagent run: its question ends it escalate at once, and the caller reads the question', async () => {
    const prefix = uniquePrefix();
    const file = await parentWith(
      'ask',
      [{ action: 'tool', tool: 'child', input: { task: 'find the order' }, confidence: 0.5 }, { action: 'final', message: 'I need the order number', confidence: 0.9 }],
      [{ action: 'request_info', input: { question: 'which order?' } }],
      HANG,
    );
    await host(file, prefix);
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'qa' });
    const { outcome, envelope } = await run.result;
    expect(outcome).toMatchObject({ status: 'done', answer: 'I need the order number' });
    expect(envelope.tools.history[0]?.output).toMatchObject({ status: 'escalate', reason: 'info_requested', question: { question: 'which order?' } });
  });

  it("should end a subagent run's wait on another core worker when the one that parked it dies before ending it", async () => {
    const prefix = uniquePrefix();
    const file = await parentWith(
      'ask-dies',
      [{ action: 'tool', tool: 'child', input: { task: 'find the order' }, confidence: 0.5 }, { action: 'final', message: 'asked', confidence: 0.9 }],
      // The child's wait would last a day: only ending it at once lets the caller go on.
      [{ action: 'request_info', input: { question: 'which order?' } }],
      HANG,
    );
    const [parent, child] = await flowsToHost(file, prefix, []);
    prefixes.push(parent!.prefix, child!.prefix);
    const parentActors = await startActorWorker({ nc, flowPath: file, prefix, roles: ['model', 'tool', 'memory'], serveTool: await idempotentToolServer(nc, prefix) });
    const parentCore = await startCoreWorker({ nc, flowPath: file, prefix, leaseMs: 1000 });
    closers.push(() => parentCore.close(), () => parentActors.close());
    // The child's first core worker parks the run, then its connection dies before it can end the wait.
    const doomed = await connectTestServer('subagents-doomed');
    const childActors = await startActorWorker({ nc, flowPath: child!.flowPath, prefix: child!.prefix, roles: ['model', 'tool', 'memory'], serveTool: await idempotentToolServer(nc, child!.prefix) });
    const first = await startCoreWorker({
      nc: doomed,
      flowPath: child!.flowPath,
      prefix: child!.prefix,
      leaseMs: 1000,
      log: (line) => {
        if (line.includes('its wait ends now')) void doomed.close();
      },
    });
    closers.push(() => first.close().catch(() => undefined), () => childActors.close());
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'qd' });
    await eventually(() => doomed.isClosed(), 10_000);
    // Another core worker of the subagent's prefix finds the parked run and ends its wait.
    const second = await startCoreWorker({ nc, flowPath: child!.flowPath, prefix: child!.prefix, leaseMs: 1000 });
    closers.push(() => second.close());
    const { outcome, envelope } = await run.result;
    expect(outcome).toMatchObject({ status: 'done', answer: 'asked' });
    expect(envelope.tools.history[0]?.output).toMatchObject({ status: 'escalate', reason: 'info_requested' });
  }, 60_000);
});
