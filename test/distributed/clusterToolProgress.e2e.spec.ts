import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { isToolUpdate, type RunToolUpdate } from '../../src/runtime/serveActors.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { followRunChunks } from '../../src/nats/cluster/runChunks.js';
import { createNatsRunBackend } from '../../src/nats/serve/natsRunBackend.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { EVERYTHING_STDIO, final, tool, writeMcpFlow } from '../support/mcpFlows.js';
import { connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, exited, removePrefix, startWorkerProcess } from './clusterSupport.js';

// On a cluster the tool worker publishes a call's progress and attachment on the run's live
// subject: a follower of the run sees the progress, and the run's core worker logs the attachment
// (tool.attached) and hands it to the call when it is re-sent, so a tool worker killed in the
// middle of an A2A task leaves the remote with one message.

const LONG = 'trigger-long-running-operation';
const AGENT = path.join(ROOT, 'test/fixtures/a2a/countingAgent.mjs');
const TASK = 'Refund order A-1001';
let dir: string;
let nc: NatsConnection;
const closers: (() => Promise<void>)[] = [];
let doomed: ChildProcess | undefined;
const remotes: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cluster-progress-'));
  nc = await connectTestServer('cluster-progress');
});

afterAll(async () => {
  for (const child of [doomed, ...remotes]) {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited(child);
    }
  }
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

/** Model and core workers of `flowPath` on `prefix`, in this process; the core's logged events go to `events`. */
async function modelAndCore(flowPath: string, prefix: string, events: AgentEvent[]): Promise<void> {
  const models = await startActorWorker({ nc, flowPath, prefix, roles: ['model'] });
  closers.push(() => models.close());
  const core = await startCoreWorker({ nc, flowPath, prefix, leaseMs: 1000, attemptTimeoutMs: 1500, onEvent: (event) => events.push(event) });
  closers.push(() => core.close());
  closers.push(() => removePrefix(nc, prefix));
}

/** A remote A2A agent (five steps of 600 ms: still working when a worker is killed) and a flow that calls it once. */
async function a2aFlow(name: string): Promise<{ flowPath: string; count: () => Promise<{ messages: number; cancelled: string[] }> }> {
  const agent = spawn(process.execPath, [AGENT, '600', '5'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  remotes.push(agent);
  const [first] = (await once(agent.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  const url = first.toString('utf8').trim();
  const flowPath = path.join(dir, `${name}.json`);
  await writeFile(
    flowPath,
    JSON.stringify({
      id: name,
      nodes: [
        { id: 'in', type: 'trigger.input' },
        { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3 } },
        { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [tool('desk', { task: TASK }), final('relayed')] } },
        { id: 'desk', type: 'agent.a2a', config: { url, timeoutMs: 60_000 } },
      ],
      edges: [
        { id: 'e-in', source: 'in', target: 'agent' },
        { id: 'e-model', source: 'agent', target: 'model' },
        { id: 'e-desk', source: 'agent', target: 'desk' },
      ],
    }),
  );
  return { flowPath, count: async () => (await (await fetch(`${url}count`)).json()) as { messages: number; cancelled: string[] } };
}

/**
 * The end of a run whose agent.a2a call was taken over: the run relayed the remote's answer, the
 * remote got its message once and cancelled nothing, and the log reads whole. Returns the log.
 */
async function expectRelayedOnce(
  run: Awaited<ReturnType<typeof startRemoteRun>>,
  count: () => Promise<{ messages: number; cancelled: string[] }>,
  prefix: string,
  traceId: string,
): Promise<AgentEvent[]> {
  const { outcome, envelope } = await run.result;
  expect(outcome).toMatchObject({ status: 'done', answer: 'relayed' });
  expect(envelope.tools.history.map((call) => [call.tool, call.status, call.output])).toEqual([['desk', 'succeeded', `done: ${TASK}`]]);
  expect(await count()).toEqual({ messages: 1, cancelled: [] });
  const store = await openJetStreamEventStore(nc, { prefix });
  const { events, problems } = await store.read(traceId);
  await store.close();
  expect(problems).toEqual([]);
  return [...events];
}

describe('a tool call on a tool worker, live', () => {
  it("should show an MCP server's progress notifications to a follower of the run, and log none of them", async () => {
    const prefix = uniquePrefix();
    const flowPath = await writeMcpFlow(dir, 'mcp-progress', { ...EVERYTHING_STDIO, include: [LONG] }, [tool(LONG, { duration: 1, steps: 4 }), final('finished')]);
    const tools = await startActorWorker({ nc, flowPath, prefix, roles: ['tool'], serveTool: await idempotentToolServer(nc, prefix) });
    closers.push(() => tools.close());
    await modelAndCore(flowPath, prefix, []);
    const updates: RunToolUpdate[] = [];
    const stop = followRunChunks(nc, prefix, 'progress', (message) => void (isToolUpdate(message) && updates.push(message)));
    // `serve --nats` follows the run the same way, for its stream's activity.
    const backend = await createNatsRunBackend({ nc, prefix, flowsDir: dir });
    const served: RunToolUpdate[] = [];
    const stopServed = backend.followChunks?.('progress', (message) => void (isToolUpdate(message) && served.push(message)));
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'progress' });
    const { outcome } = await run.result;
    await nc.flush();
    stop();
    stopServed?.();
    await backend.close();
    expect(outcome).toMatchObject({ status: 'done', answer: 'finished' });
    // The server sends one notification per step, counted out of the steps, for the call 'progress:1'.
    expect(updates).toEqual([1, 2, 3, 4].map((step) => ({ traceId: 'progress', iteration: 1, toolCallId: 'progress:1', progress: { progress: step, total: 4 } })));
    expect(served).toEqual(updates);
    const store = await openJetStreamEventStore(nc, { prefix });
    const { events } = await store.read('progress');
    await store.close();
    expect(events.map((event) => event.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'tool.requested', 'tool.completed', 'model.requested', 'model.answered', 'run.completed']);
  }, 60_000);
});

describe('an agent.a2a call on a cluster whose worker dies mid-task', () => {
  it("should log the remote task's id, and the worker that takes the call over follows that task: the remote gets the message once", async () => {
    const { flowPath, count } = await a2aFlow('a2a-crash');
    const prefix = uniquePrefix();
    // The first tool worker, a process of its own: its claim on a call lasts 1 s once it is gone.
    doomed = await startWorkerProcess(flowPath, 'tool', { prefix, extraArgs: ['--lease', '1000'] });
    const events: AgentEvent[] = [];
    await modelAndCore(flowPath, prefix, events);

    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'a2a' });
    // The remote named its task, and the core worker logged it: kill the tool worker while the task works.
    await eventually(() => events.some((event) => event.type === 'tool.attached'), 15_000);
    expect((await count()).messages).toBe(1);
    doomed.kill('SIGKILL');
    await exited(doomed);
    const heir = await startActorWorker({ nc, flowPath, prefix, roles: ['tool'], serveTool: await idempotentToolServer(nc, prefix, { leaseMs: 1000 }) });
    closers.push(() => heir.close());

    // The heir re-attached to the task the dead worker started: no second message, nothing cancelled.
    const logged = await expectRelayedOnce(run, count, prefix, 'a2a');
    expect(logged.map((event) => event.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'tool.requested', 'tool.attached', 'tool.completed', 'model.requested', 'model.answered', 'run.completed']);
    expect(logged[4]?.data).toMatchObject({ tool: 'desk', idempotencyKey: 'a2a:1', handle: { taskId: expect.any(String) } });
  }, 90_000);

  it('should, when the core worker dies instead, be taken over from its tool.attached: the remote still gets the message once', async () => {
    const { flowPath, count } = await a2aFlow('a2a-core');
    const prefix = uniquePrefix();
    closers.push(() => removePrefix(nc, prefix));
    const workers = await startActorWorker({ nc, flowPath, prefix, roles: ['model', 'tool'], serveTool: await idempotentToolServer(nc, prefix, { leaseMs: 1000 }) });
    closers.push(() => workers.close());
    // The core worker, a process of its own, dies right after its fifth event, tool.attached, is stored.
    doomed = await startWorkerProcess(flowPath, 'core', { prefix, env: { REDFLOW_CRASH_AFTER_EVENT: 'a2a-core:5' }, extraArgs: ['--lease', '1000'] });
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'a2a-core' });
    expect(await exited(doomed)).toBe('SIGKILL');
    const heir = await startCoreWorker({ nc, flowPath, prefix, owner: 'heir', leaseMs: 1000, attemptTimeoutMs: 1500 });
    closers.push(() => heir.close());

    const logged = await expectRelayedOnce(run, count, prefix, 'a2a-core');
    expect(logged.map((event) => event.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'tool.requested', 'tool.attached', 'run.resumed', 'tool.completed', 'model.requested', 'model.answered', 'run.completed']);
  }, 90_000);
});
