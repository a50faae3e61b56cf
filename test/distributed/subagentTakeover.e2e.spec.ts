import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage, Subject } from '../../src/actors/subjects.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { subagentPrefix } from '../../src/nats/cluster/clusterSubagents.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { parseTraceEvents } from '../../src/nats/cluster/traceEvent.js';
import { flowsToHost } from '../../src/nats/cluster/subagentFlows.js';
import { connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, exited, removePrefix, startWorkerProcess } from './clusterSupport.js';

/**
 * A subagent's call on a cluster whose tool worker dies while the subagent's run is under way: the
 * caller's core worker sends the call again, another tool worker finds the run by its trace id and
 * follows it. Tool workers are a real `redflow worker` process (SIGKILLed) and, after it, workers
 * in this process; the core and model workers run here throughout.
 */

const parentFlow = path.join(ROOT, 'test/fixtures/subagents/parent.json');
const prefix = uniquePrefix();
const childPrefix = subagentPrefix(prefix, 'counter');

let dir: string;
let nc: NatsConnection;
let toolProcess: ChildProcess | undefined;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-subagent-takeover-'));
  process.env.COUNTER_FILE = path.join(dir, 'count');
  nc = await connectTestServer('subagent-takeover');
  for (const hosted of await flowsToHost(parentFlow, prefix)) {
    const actors = await startActorWorker({ nc, flowPath: hosted.flowPath, prefix: hosted.prefix, roles: ['model'] });
    // A call unanswered for 1 s is sent again: the test need not wait 30 s for the dead worker's call.
    const core = await startCoreWorker({ nc, flowPath: hosted.flowPath, prefix: hosted.prefix, leaseMs: 1000, attemptTimeoutMs: 1000 });
    closers.push(() => core.close(), () => actors.close());
  }
});

afterAll(async () => {
  toolProcess?.kill('SIGKILL');
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await removePrefix(nc, prefix);
  await removePrefix(nc, childPrefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

describe('a subagent call whose tool worker is SIGKILLed while the subagent runs', () => {
  it('should be followed to the same run by the tool worker the call is sent to next: one subagent run per call, the caller done once', async () => {
    toolProcess = await startWorkerProcess(parentFlow, 'tool', { prefix, env: { COUNTER_FILE: path.join(dir, 'count') }, extraArgs: ['--lease', '1000'] });
    const childEvents: AgentEvent[] = [];
    const follow = nc.subscribe(Subject.runTrace(childPrefix, 'tk-1'), {
      callback: (_, message) => {
        childEvents.push(...(parseTraceEvents(message.data) ?? []));
      },
    });
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'tk' });
    // The worker process started the subagent's run for the call, and follows it: kill it now.
    await eventually(() => childEvents.some((event) => event.type === 'run.started'), 15_000);
    toolProcess.kill('SIGKILL');
    expect(await exited(toolProcess)).toBe('SIGKILL');
    // Other tool workers, for the caller's tools and the subagent's.
    for (const hosted of await flowsToHost(parentFlow, prefix)) {
      const serveTool = await idempotentToolServer(nc, hosted.prefix, { leaseMs: 1000 });
      const tools = await startActorWorker({ nc, flowPath: hosted.flowPath, prefix: hosted.prefix, roles: ['tool'], serveTool });
      closers.push(() => tools.close());
    }
    const { outcome, envelope } = await run.result;
    follow.unsubscribe();
    expect(outcome).toMatchObject({ status: 'done', answer: 'the counter counted twice, twice' });
    expect(envelope.tools.history.map((call) => [call.childTraceId, call.status, call.output])).toEqual([
      ['tk-1', 'succeeded', { status: 'done', reason: 'final_answer', answer: 'counted to two' }],
      ['tk-2', 'succeeded', { status: 'done', reason: 'final_answer', answer: 'counted to two' }],
    ]);
    const store = await openJetStreamEventStore(nc, { prefix });
    const parent = (await store.read('tk')).events;
    expect(parent.filter((event) => event.type === 'run.completed')).toHaveLength(1);
    expect(fold(parent)).toEqual(envelope);
    // One run per call on the subagent's prefix, each ended once.
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(Storage.traceStream(childPrefix), { subjects_filter: Subject.log(childPrefix, '*', '>') });
    const started = Object.entries(info.state.subjects ?? {}).filter(([subject]) => subject.endsWith('.run.started'));
    expect(started).toEqual([
      [Subject.log(childPrefix, 'tk-1', 'run.started'), 1],
      [Subject.log(childPrefix, 'tk-2', 'run.started'), 1],
    ]);
    const ended = Object.entries(info.state.subjects ?? {}).filter(([subject]) => subject.endsWith('.run.completed') || subject.endsWith('.run.failed'));
    expect(ended.map(([, count]) => count)).toEqual([1, 1]);
    // Every call of the subagents' tool had its effect (a call cut by the kill may have had it twice: bump does not check its key).
    const counted = (await readFile(path.join(dir, 'count'), 'utf8')).split('\n').filter(Boolean);
    expect([...new Set(counted)].sort()).toEqual(['tk-1:1', 'tk-1:2', 'tk-2:1', 'tk-2:2']);
  }, 60_000);
});
