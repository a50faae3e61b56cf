import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { EXIT_GRACE_MS, STOP_DEADLINE_MS } from '../../src/cli/stopWithin.js';
import { eventually, startNatsServer, type PrivateNatsServer } from '../nats/natsSupport.js';
import { ROOT } from './clusterSupport.js';
import { endingWithin, killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// A `redflow worker` asked to stop (SIGTERM) when its nats-server is gone: it cannot drain or
// release anything, and must still exit within its stop deadline instead of waiting for a server
// that may never come back.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
/** The deadline and the grace after it, plus time for node to act on a busy machine. */
const EXIT_BOUND_MS = STOP_DEADLINE_MS + EXIT_GRACE_MS + 4000;
const cleanups: (() => Promise<unknown>)[] = [];
const processes: RedflowProcess[] = [];

afterEach(async () => {
  await killAll(processes.splice(0));
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function privateServer(): Promise<PrivateNatsServer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'redflow-shutdown-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'nats.conf');
  await writeFile(config, `jetstream { store_dir: "${path.join(dir, 'store')}" }\n`);
  const server = await startNatsServer(config);
  cleanups.push(() => server.stop());
  return server;
}

function worker(server: PrivateNatsServer, env: Record<string, string> = {}): RedflowProcess {
  const started = startRedflow(['worker', flowPath, '--nats', server.url, '--lease', '1000'], env);
  processes.push(started);
  return started;
}

/** Starts a run whose tool call takes 20 s, and resolves once the call is under way. */
async function runInATool(server: PrivateNatsServer): Promise<void> {
  const client: NatsConnection = await connectNats({ servers: server.url, name: 'shutdown-client', timeoutMs: 2000 });
  cleanups.push(() => client.close());
  const live: AgentEvent[] = [];
  await startRemoteRun({ nc: client, input: 'go', onEvent: (event) => live.push(event) });
  await eventually(() => live.some((event) => event.type === 'tool.requested'), 10_000);
}

describe('stopping a worker whose NATS server is gone', () => {
  it('should exit within the stop deadline when idle', async () => {
    const server = await privateServer();
    const started = worker(server);
    await started.ready();
    await server.stop();
    started.child.kill('SIGTERM');
    expect(await endingWithin(started, EXIT_BOUND_MS)).toEqual({ code: 0, signal: null });
    // The heartbeat's delete gives up within a beat now (runLeases): the stop may end in time, drained or not.
    expect(started.stderr()).toMatch(/stopping: runs in progress are left/);
  }, 30_000);

  it('should exit within the stop deadline with a run under way', async () => {
    const server = await privateServer();
    // Each tool call takes 20 s, on a timer the tool keeps whatever its abort signal says: the
    // run is in the middle of one when the server goes.
    const started = worker(server, { SLOW_BUMP_MS: '20000' });
    await started.ready();
    await runInATool(server);
    await server.stop();
    started.child.kill('SIGTERM');
    expect(await endingWithin(started, EXIT_BOUND_MS)).toEqual({ code: 0, signal: null });
  }, 40_000);
});

describe('stopping a client whose NATS server is gone', () => {
  it('should end `redflow tail` within the stop deadline on Ctrl-C', async () => {
    const server = await privateServer();
    const tail = startRedflow(['tail', '--nats', server.url]);
    processes.push(tail);
    await tail.waitFor('following');
    await server.stop();
    tail.child.kill('SIGINT');
    expect(await endingWithin(tail, EXIT_BOUND_MS)).toEqual({ code: 0, signal: null });
  }, 30_000);

  it('should end `redflow run --nats` within the stop deadline on Ctrl-C (130), the run left to the cluster', async () => {
    const server = await privateServer();
    await worker(server, { SLOW_BUMP_MS: '20000' }).ready();
    const watcher = await connectNats({ servers: server.url, name: 'shutdown-watcher', timeoutMs: 2000 });
    cleanups.push(() => watcher.close());
    const seen: string[] = [];
    watcher.subscribe('redflow.trace.>', { callback: (_error, msg) => void seen.push(msg.subject) });
    await watcher.flush();
    const run = startRedflow(['run', flowPath, '--nats', server.url, '--input', 'go']);
    processes.push(run);
    await eventually(() => seen.some((subject) => subject.endsWith('.tool.requested')), 10_000);
    await server.stop();
    run.child.kill('SIGINT');
    expect(await endingWithin(run, EXIT_BOUND_MS)).toEqual({ code: 130, signal: null });
  }, 40_000);
});

describe('stopping `redflow serve --nats` whose NATS server is gone', () => {
  it('should exit within the stop deadline on SIGTERM', async () => {
    const server = await privateServer();
    await worker(server).ready();
    const flows = await mkdtemp(path.join(tmpdir(), 'redflow-shutdown-flows-'));
    cleanups.push(() => rm(flows, { recursive: true, force: true }));
    const serve = startRedflow(['serve', '--nats', server.url, '--flows', flows, '--port', '0']);
    processes.push(serve);
    await serve.waitFor('runs on the NATS cluster');
    await server.stop();
    serve.child.kill('SIGTERM');
    expect(await endingWithin(serve, EXIT_BOUND_MS)).toEqual({ code: 0, signal: null });
  }, 40_000);
});

describe('stopping a worker whose tool ignores its abort signal', () => {
  it('should exit soon after a clean stop, not when the tool is done', async () => {
    const server = await privateServer();
    const started = worker(server, { SLOW_BUMP_MS: '20000' });
    await started.ready();
    await runInATool(server);
    started.child.kill('SIGTERM');
    expect(await endingWithin(started, EXIT_BOUND_MS)).toEqual({ code: 0, signal: null });
    expect(started.stderr()).not.toMatch(/stopped without draining/);
  }, 40_000);
});
