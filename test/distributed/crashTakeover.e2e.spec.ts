import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJetStreamEventStore } from '../../src/events/jetstream/jetstreamEventStore.js';
import { startCoreWorker } from '../../src/distributed/coreWorker.js';
import { openRunLeases } from '../../src/distributed/runLeases.js';
import { startRemoteRun } from '../../src/distributed/remoteRun.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, exited, removePrefix, startWorkerProcess } from './clusterSupport.js';

// The core worker that dies is a real `redflow worker` process (npm test builds dist/ first),
// killed with SIGKILL right after it appends event k; a second core worker takes the run over.
const bin = path.join(ROOT, 'bin/redflow.js');
const flowPath = path.join(ROOT, 'test/fixtures/crash/flow.json');
const prefix = uniquePrefix();
const LEASE_MS = 800;

let dir: string;
let nc: NatsConnection;
let actorWorker: ChildProcess;

function worker(roles: string, env: Record<string, string>): Promise<ChildProcess> {
  return startWorkerProcess(flowPath, roles, { prefix, env, extraArgs: ['--lease', String(LEASE_MS)] });
}

async function counterLines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-takeover-'));
  nc = await connectTestServer('takeover-test');
  // Model and tool workers: the tool appends each execution's idempotency key to COUNTER_FILE.
  actorWorker = await worker('model,tool', { COUNTER_FILE: path.join(dir, 'effects.log') });
});

afterAll(async () => {
  actorWorker?.kill('SIGTERM');
  if (actorWorker) await exited(actorWorker);
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

describe('distributed mode: a core worker killed at any event boundary', () => {
  it('should have another core worker finish the run, the outcome unchanged and each completed tool call made once', async () => {
    const store = await openJetStreamEventStore(nc, { prefix });
    const baselineCore = await worker('core', {});
    const baseline = await startRemoteRun({ nc, prefix, input: 'go', traceId: 'baseline' });
    const expected = await baseline.result;
    baselineCore.kill('SIGTERM');
    await exited(baselineCore);
    const total = (await store.read('baseline')).events.length;
    expect(total).toBeGreaterThan(10);

    for (let k = 1; k < total; k++) {
      const traceId = `kill-${k}`;
      const doomed = await worker('core', { REDFLOW_CRASH_AFTER_EVENT: String(k) });
      const gone = exited(doomed);
      const run = await startRemoteRun({ nc, prefix, input: 'go', traceId });
      expect(await gone, `worker killed after event ${k}`).toBe('SIGKILL');
      const heir = await startCoreWorker({ nc, flowPath, prefix, owner: `heir-${k}`, leaseMs: LEASE_MS, attemptTimeoutMs: 2000 });
      const { outcome } = await run.result;
      await heir.close();
      expect(outcome, `killed after event ${k}`).toEqual(expected.outcome);
      const { events } = await store.read(traceId);
      const completed = events.filter((e) => e.type === 'tool.completed').map((e) => (e.data as { idempotencyKey: string }).idempotencyKey);
      const effects = (await counterLines(path.join(dir, 'effects.log'))).filter((key) => key.startsWith(`${traceId}:`));
      expect(effects, `killed after event ${k}`).toEqual(completed);
      // Events recorded in one step are stored in one message: a kill after the final answer finds
      // the run's ending stored with it, nothing left to resume; any earlier kill, one resume.
      const endedWithAnswer = events.at(-1)?.seq === total && events.at(-2)?.type === 'model.answered' && k >= total - 1;
      expect(events.filter((e) => e.type === 'run.resumed'), `killed after event ${k}`).toHaveLength(endedWithAnswer ? 0 : 1);
    }
  }, 120_000);

  it('should let `redflow resume <traceId> --nats` finish a run whose core worker died', async () => {
    // The command's first look must land within the dead worker's lease, however slow this machine
    // is right now. The lease is the TTL of a prefix's leases bucket, set by the first core worker
    // there, so this test has a prefix of its own and a lease several times what one such look
    // takes here and now (a look at a finished run: start, connect, open the leases, read the log).
    const lookMs = await timeOfALook();
    // Capped, so that the waits below (up to the lease and 10 s) stay inside the test's timeout.
    const leaseMs = Math.min(Math.max(2000, 5 * lookMs), 30_000);
    const own = uniquePrefix();
    const started: ChildProcess[] = [];
    try {
      started.push(await startWorkerProcess(flowPath, 'model,tool', { prefix: own, env: { COUNTER_FILE: path.join(dir, 'resume-effects.log') } }));
      const traceId = 'cli-resume';
      const doomed = await startWorkerProcess(flowPath, 'core', { prefix: own, env: { REDFLOW_CRASH_AFTER_EVENT: '6' }, extraArgs: ['--lease', String(leaseMs)] });
      started.push(doomed);
      const gone = exited(doomed);
      const run = await startRemoteRun({ nc, prefix: own, input: 'go', traceId });
      expect(await gone).toBe('SIGKILL');
      run.detach();
      const resumeArgs = ['resume', traceId, '--nats', NATS_URL, '--prefix', own, '--flow', flowPath];
      // Still within the dead worker's lease: the command leaves the run to it.
      const early = await cli(resumeArgs);
      expect(early.code, `${early.stderr}\n(a look took ${lookMs} ms; the lease is ${leaseMs} ms)`).not.toBe(0);
      expect(early.stderr).toContain('live core worker');
      // Once the lease has run out (the run is an orphan to the cluster), the command takes it.
      await orphaned(own, traceId, leaseMs + 10_000);
      const resumed = await cli([...resumeArgs, '--json']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout).outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'bumped three times' });
      const store = await openJetStreamEventStore(nc, { prefix: own });
      const { events } = await store.read(traceId);
      expect(events.at(-1)?.type).toBe('run.completed');
    } finally {
      for (const child of started) child.kill('SIGTERM');
      await Promise.all(started.map((child) => exited(child)));
      await removePrefix(nc, own);
    }
  }, 150_000);
});

/** How long `redflow resume <traceId> --nats` takes here to look at a finished run and say so, in ms. */
async function timeOfALook(): Promise<number> {
  const traceId = `look-${Date.now()}`;
  const core = await startCoreWorker({ nc, flowPath, prefix, owner: 'look-core', leaseMs: LEASE_MS });
  try {
    await (await startRemoteRun({ nc, prefix, input: 'go', traceId })).result;
  } finally {
    await core.close();
  }
  const started = performance.now();
  const look = await cli(['resume', traceId, '--nats', NATS_URL, '--prefix', prefix, '--flow', flowPath, '--json']);
  if (look.code !== 0) throw new Error(`looking at the finished run ${traceId} failed (${look.code}): ${look.stderr}`);
  return Math.ceil(performance.now() - started);
}

/** Resolves once the cluster sees run `traceId` as an orphan (its owner's heartbeat has expired). */
async function orphaned(onPrefix: string, traceId: string, timeoutMs: number): Promise<void> {
  const observer = await openRunLeases(nc, { prefix: onPrefix, owner: 'test-observer', leaseMs: 60_000 });
  try {
    const deadline = Date.now() + timeoutMs;
    while (!(await observer.orphans()).some((record) => record.traceId === traceId)) {
      if (Date.now() > deadline) throw new Error(`run ${traceId} was not orphaned within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await observer.close();
  }
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
