import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
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
    // A lease far longer than this test: the command's first look lands within it however slow the
    // machine is, and the lease's end is brought about by the test (below) rather than waited for.
    const leaseMs = 120_000;
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
      expect(early.code, early.stderr).not.toBe(0);
      expect(early.stderr).toContain('live core worker');
      // The lease runs out: the dead worker's heartbeat is gone from the leases bucket, as when it
      // expires there, and the run is an orphan to the cluster. The command takes it.
      await dropHeartbeatOfOwner(own, traceId);
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
  }, 90_000);
});

/** Removes the heartbeat of run `traceId`'s owner, which is what the end of its lease does. */
async function dropHeartbeatOfOwner(onPrefix: string, traceId: string): Promise<void> {
  const kvm = new Kvm(nc);
  const record = await (await kvm.open(Storage.runsBucket(onPrefix))).get(traceId);
  if (record?.operation !== 'PUT') throw new Error(`run ${traceId} has no record on ${onPrefix}`);
  const { owner } = record.json<{ owner: string }>();
  await (await kvm.open(Storage.leasesBucket(onPrefix))).delete(owner);
}

/** Runs the `redflow` command; one that has not ended after a minute is killed, and says so. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    const stuck = setTimeout(() => {
      stderr += `\n(redflow ${args.join(' ')} had not ended after 60 s: killed)`;
      child.kill('SIGKILL');
    }, 60_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => {
      clearTimeout(stuck);
      resolve({ code, stdout, stderr });
    });
  });
}
