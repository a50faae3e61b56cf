import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import { Storage } from '../../src/actors/subjects.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { logStatus } from '../../src/events/resumePoint.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { startCuttableProxy, type CuttableProxy } from '../nats/cuttableProxy.js';
import { connectTestServer, startNatsServer, uniquePrefix, type PrivateNatsServer } from '../nats/natsSupport.js';
import { ROOT, exited, removePrefix, startWorkerProcess } from './clusterSupport.js';
import { effectsByKey, readEffects, waitForEffects } from './effectLog.js';

// How long a lost call holds its run on a cluster: a tool worker killed mid-call (another one up),
// and nats-server restarted while 50 calls are under way. Real `redflow worker` processes; the tool
// (test/fixtures/liveness) logs each start and effect to a file, so "effect once" is checked too.
// The bounds are several times what these take here (printed), and far below the 30 s a lost
// call used to wait for its attempt to time out.

const flowPath = path.join(ROOT, 'test/fixtures/liveness/flow.json');
const started: ChildProcess[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-liveness-'));
});

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(started.map((child) => exited(child)));
  await rm(dir, { recursive: true, force: true });
});

async function worker(roles: string, options: Parameters<typeof startWorkerProcess>[2]): Promise<ChildProcess> {
  const child = await startWorkerProcess(flowPath, roles, options);
  started.push(child);
  return child;
}

describe('a tool worker killed in the middle of calls, another one up', () => {
  const prefix = uniquePrefix();
  let nc: NatsConnection;

  beforeAll(async () => {
    nc = await connectTestServer('liveness-dead-tool-worker');
  });

  afterAll(async () => {
    await removePrefix(nc, prefix);
    await nc.drain();
  });

  it('should have the runs finish within seconds, each effect once', async () => {
    const effectLog = path.join(dir, 'dead-worker.log');
    // A re-send after 2 s of silence, and a dead worker's claim on a call runs out after 1.5 s.
    await worker('core,model', { prefix, extraArgs: ['--attempt-timeout', '2000'] });
    const doomed = await worker('tool', { prefix, env: { EFFECT_LOG: effectLog, EFFECT_DELAY_MS: '600000' }, extraArgs: ['--lease', '1500'] });
    const runs = await Promise.all(Array.from({ length: 5 }, () => startRemoteRun({ nc, prefix, input: 'go' })));
    const keys = runs.map((run) => `${run.traceId}:1`).sort();
    await waitForEffects(effectLog, (steps) => new Set(steps.filter((s) => s.what === 'started' && s.pid === doomed.pid).map((s) => s.key)).size === keys.length, 15_000);
    await worker('tool', { prefix, env: { EFFECT_LOG: effectLog, EFFECT_DELAY_MS: '200' }, extraArgs: ['--lease', '1500'] });

    doomed.kill('SIGKILL');
    await exited(doomed);
    const killedAt = performance.now();
    const outcomes = await Promise.all(runs.map(async (run) => (await run.result).outcome));
    const stallMs = performance.now() - killedAt;

    expect(outcomes.map((outcome) => outcome.reason)).toEqual(keys.map(() => 'final_answer'));
    const steps = await readEffects(effectLog);
    expect([...effectsByKey(steps)].sort()).toEqual(keys.map((key) => [key, 1]));
    expect(steps.filter((step) => step.what === 'effect' && step.pid === doomed.pid)).toEqual([]);
    console.log(`runs finished ${Math.round(stallMs)} ms after their tool worker was killed`);
    // At most: a 2 s attempt, the rest of a 1.5 s lease, a 0.2 s call, then the model's answer.
    expect(stallMs).toBeLessThan(6000);
  }, 60_000);
});

describe('nats-server restarted while 50 tool calls are under way, the core worker back last', () => {
  const prefix = uniquePrefix();
  let server: PrivateNatsServer;
  let proxy: CuttableProxy;
  let nc: NatsConnection;

  afterAll(async () => {
    await nc?.close();
    await proxy?.close();
    await server?.stop();
  });

  it('should have every run finish within seconds of its core worker reconnecting, each effect once', async () => {
    const config = path.join(dir, 'nats.conf');
    await writeFile(config, `jetstream { store_dir: "${path.join(dir, 'store')}" }\n`);
    server = await startNatsServer(config);
    const port = Number(server.url.split(':')[1]);
    // The core worker reaches the server through a relay the test holds shut after the restart,
    // so it comes back after the tool worker has answered: the order that lost every reply to it.
    proxy = await startCuttableProxy(server.url);
    const effectLog = path.join(dir, 'restart.log');
    // Defaults everywhere: the 30 s attempt timeout, the 3 s run lease, the 10 s tool lease.
    await worker('core,model', { prefix, nats: proxy.url });
    await worker('tool', { prefix, nats: server.url, env: { EFFECT_LOG: effectLog, EFFECT_DELAY_MS: '2500' } });
    nc = await connectNats({ servers: server.url, name: 'liveness-restart-client', timeoutMs: 2000 });

    const runs = await Promise.all(Array.from({ length: 50 }, () => startRemoteRun({ nc, prefix, input: 'go' })));
    // The stored logs tell when the runs end, whatever the client's own reconnect missed live.
    for (const run of runs) run.detach();
    const keys = runs.map((run) => `${run.traceId}:1`).sort();
    await waitForEffects(effectLog, (steps) => steps.filter((step) => step.what === 'started').length >= keys.length, 20_000);

    // Down for 2 s, with every call under way; the core worker stays away until each call's
    // result is stored and answered (to nobody).
    proxy.cut();
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    server = await startNatsServer(config, {}, port);
    await storedResults(nc, prefix, keys.length, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxy.open();
    const backAt = performance.now();
    await allEnded(nc, prefix, keys.length, 60_000);
    const stallMs = performance.now() - backAt;

    const store = await openJetStreamEventStore(nc, { prefix });
    for (const run of runs) {
      const status = logStatus((await store.read(run.traceId)).events);
      expect(status.kind === 'finished' && status.outcome.reason, run.traceId).toBe('final_answer');
    }
    expect([...effectsByKey(await readEffects(effectLog))].sort()).toEqual(keys.map((key) => [key, 1]));
    console.log(`50 runs finished ${Math.round(stallMs)} ms after their core worker could reconnect`);
    expect(stallMs).toBeLessThan(8000);
  }, 120_000);
});

/** Resolves once `count` tool results of `prefix` are stored (polled; the server may still be starting). */
async function storedResults(nc: NatsConnection, prefix: string, count: number, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  const stream = `KV_${Storage.toolResultsBucket(prefix)}`;
  for (;;) {
    // A short timeout: a look sent while the client is still reconnecting is lost, not late.
    const stored = await jetstreamManager(nc, { timeout: 500 })
      .then((jsm) => jsm.streams.info(stream, { subjects_filter: '>' }))
      .then((info) => Object.keys(info.state.subjects ?? {}).length)
      .catch(() => 0);
    // One subject per key; a key's last value is its result once the tool worker is done with it.
    if (stored >= count && (await allDone(nc, prefix))) return;
    if (performance.now() > deadline) throw new Error(`only ${stored} of ${count} tool results were stored within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** True when every key of the tool-results bucket holds a result (not a running call's lease). */
async function allDone(nc: NatsConnection, prefix: string): Promise<boolean> {
  try {
    const kv = await new Kvm(nc).open(Storage.toolResultsBucket(prefix));
    for await (const key of await kv.keys()) {
      const entry = await kv.get(key);
      if ((entry?.json() as { state?: string } | undefined)?.state !== 'done') return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Resolves once `count` runs of `prefix` have a last event in the trace stream (polled; the server may still be starting). */
async function allEnded(nc: NatsConnection, prefix: string, count: number, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  const stream = Storage.traceStream(prefix);
  for (;;) {
    // A short timeout: a look sent while the client is still reconnecting is lost, not late.
    const ended = await jetstreamManager(nc, { timeout: 500 })
      .then((jsm) => jsm.streams.info(stream, { subjects_filter: `${prefix}.log.*.run.*` }))
      .then((info) => Object.keys(info.state.subjects ?? {}).filter((subject) => /\.run\.(completed|failed)$/.test(subject)).length)
      .catch(() => 0);
    if (ended >= count) return;
    if (performance.now() > deadline) throw new Error(`only ${ended} of ${count} runs ended within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
