import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJetStreamEventStore } from '../../src/events/jetstream/jetstreamEventStore.js';
import { startCoreWorker } from '../../src/distributed/coreWorker.js';
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
      expect(events.filter((e) => e.type === 'run.resumed'), `killed after event ${k}`).toHaveLength(1);
    }
  }, 120_000);

  it('should let `redflow resume <traceId> --nats` finish a run whose core worker died', async () => {
    const traceId = 'cli-resume';
    const doomed = await worker('core', { REDFLOW_CRASH_AFTER_EVENT: '6' });
    const gone = exited(doomed);
    const run = await startRemoteRun({ nc, prefix, input: 'go', traceId });
    expect(await gone).toBe('SIGKILL');
    run.detach();
    // Still within the dead worker's lease: the command leaves the run to it.
    const early = await cli(['resume', traceId, '--nats', NATS_URL, '--prefix', prefix, '--flow', flowPath]);
    expect(early.code).not.toBe(0);
    expect(early.stderr).toContain('live core worker');
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 700));
    const resumed = await cli(['resume', traceId, '--nats', NATS_URL, '--prefix', prefix, '--flow', flowPath, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'bumped three times' });
    const store = await openJetStreamEventStore(nc, { prefix });
    const { events } = await store.read(traceId);
    expect(events.at(-1)?.type).toBe('run.completed');
  }, 30_000);
});

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
