import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { encodeJsonlLog, readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { forkOnCluster } from '../../src/nats/cluster/clusterFork.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { createNatsRunBackend } from '../../src/nats/serve/natsRunBackend.js';
import { createRedflowServer } from '../../src/server/server.js';
import type { RunForkedResponse, RunResponse } from '../../src/server/apiTypes.js';
import { call, waitForRun } from '../server/serverHarness.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, exited, removePrefix, startWorkerProcess } from './clusterSupport.js';

// Forks on a cluster: a fork's log (run.forked, then its parent's prefix) goes to the trace stream
// and a core worker takes it over and runs it, like any cluster run. The model and tool workers are
// a real `redflow worker` process; the core workers in-process, or a real process to kill -9.
const bin = path.join(ROOT, 'bin/redflow.js');
const flowPath = path.join(ROOT, 'test/fixtures/crash/flow.json');
const prefix = uniquePrefix();
const LEASE_MS = 800;

let dir: string;
let nc: NatsConnection;
let store: JetStreamEventStore;
let actorWorker: ChildProcess;
let core: CoreWorker | undefined;
let env: Record<string, string>;

/** The parts of an event a copy keeps: the fork re-stamps its ids, trace id and seqs. */
const content = (event: AgentEvent) => ({ type: event.type, iteration: event.iteration, data: event.data, time: event.time });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cluster-fork-'));
  env = { COUNTER_FILE: path.join(dir, 'effects.log') };
  nc = await connectTestServer('cluster-fork-test');
  actorWorker = await startWorkerProcess(flowPath, 'model,tool', { prefix, env, extraArgs: ['--lease', String(LEASE_MS)] });
  core = await startCoreWorker({ nc, flowPath, prefix, owner: 'core-a', leaseMs: LEASE_MS, attemptTimeoutMs: 2000 });
  store = await openJetStreamEventStore(nc, { prefix });
  await (await startRemoteRun({ nc, prefix, input: 'go', traceId: 'parent' })).result;
});

afterAll(async () => {
  await core?.close();
  actorWorker?.kill('SIGTERM');
  if (actorWorker) await exited(actorWorker);
  await store?.close();
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

describe('redflow fork --nats', () => {
  it('should run the fork of a recorded cluster run on a core worker to its end, its log run.forked then the parent prefix', async () => {
    const answer = JSON.stringify({ action: 'final', message: 'forked at two', confidence: 0.9 });
    const forked = await cli(['fork', 'parent', '--at', '2', '--answer', `2=${answer}`, '--nats', NATS_URL, '--prefix', prefix, '--json']);
    expect(forked.code, forked.stderr).toBe(0);
    const { traceId, outcome } = JSON.parse(forked.stdout) as { traceId: string; outcome: { answer?: string; status: string } };
    expect(outcome).toMatchObject({ status: 'done', answer: 'forked at two' });

    const parent = (await store.read('parent')).events;
    const fork = (await store.read(traceId)).events;
    expect(fork[0]?.type).toBe('run.started');
    expect(fork[1]).toMatchObject({ type: 'run.forked', data: { parent: { traceId: 'parent' }, atIteration: 2 } });
    const atSeq = (fork[1]?.data as { atSeq: number }).atSeq;
    // The parent's events 2..atSeq, copied after the fork's own two.
    expect(fork.slice(2, atSeq + 1).map(content)).toEqual(parent.slice(1, atSeq).map(content));
    expect(fork.slice(atSeq + 1).map((event) => event.type)).toContain('run.completed');
    expect(fork.every((event, i) => event.traceId === traceId && event.seq === i + 1)).toBe(true);
    // A cluster run like any other: tail follows it from its first event to its end.
    const tailed = await cli(['tail', traceId, '--nats', NATS_URL, '--prefix', prefix, '--json']);
    expect(tailed.code, tailed.stderr).toBe(0);
    expect(tailed.stdout.trim().split('\n').map((text) => (JSON.parse(text) as AgentEvent).type)).toEqual(fork.map((event) => event.type));
  }, 60_000);

  it('should show the fork under its parent in replay --tree --nats, its tool result given by the core worker', async () => {
    // Iteration 3's tool call answered by the core worker from --tool-result: the tool never runs.
    const given = { bumped: false, by: 0 };
    const forked = await cli(['fork', 'parent', '--at', '3', '--tool-result', `3=${JSON.stringify(given)}`, '--nats', NATS_URL, '--prefix', prefix, '--json']);
    expect(forked.code, forked.stderr).toBe(0);
    const { traceId } = JSON.parse(forked.stdout) as { traceId: string };
    const completed = (await store.read(traceId)).events.find((event) => event.type === 'tool.completed' && event.iteration === 3);
    expect(completed?.data).toMatchObject({ ok: true, output: given });
    expect((await readFile(env.COUNTER_FILE as string, 'utf8')).split('\n').filter((key) => key.startsWith(`${traceId}:`))).toEqual([]);
    for (const from of [traceId, 'parent']) {
      const tree = await cli(['replay', from, '--tree', '--json', '--nats', NATS_URL, '--prefix', prefix]);
      expect(tree.code, tree.stderr).toBe(0);
      const root = JSON.parse(tree.stdout) as { traceId: string; forks?: { traceId: string }[] };
      expect(root.traceId).toBe('parent');
      expect(root.forks?.map((node) => node.traceId)).toContain(traceId);
    }
  }, 60_000);

  it('should have another core worker finish a fork whose core worker was killed with SIGKILL', async () => {
    await core?.close();
    core = undefined;
    const traceId = 'fork-killed';
    // Killed right after it stores the fork's third live event (the prefix of a fork at 2 is 6 events).
    const doomed = await startWorkerProcess(flowPath, 'core', { prefix, env: { REDFLOW_CRASH_AFTER_EVENT: `${traceId}:9` }, extraArgs: ['--lease', String(LEASE_MS)] });
    const gone = exited(doomed);
    const fork = await forkOnCluster({ nc, prefix, from: 'parent', at: 2, traceId });
    expect(await gone).toBe('SIGKILL');
    core = await startCoreWorker({ nc, flowPath, prefix, owner: 'core-b', leaseMs: LEASE_MS, attemptTimeoutMs: 2000 });
    const { outcome } = await fork.result;
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'bumped three times' });
    const { events } = await store.read(traceId);
    expect(events.filter((event) => event.type === 'run.resumed').length).toBeGreaterThanOrEqual(2);
    expect(events[1]?.type).toBe('run.forked');
  }, 60_000);

  it('should refuse a fork past the end of the run with the code an embedded fork refuses it with', async () => {
    const parentLog = path.join(dir, 'parent.jsonl');
    await writeFile(parentLog, encodeJsonlLog((await store.read('parent')).events));
    const embedded = await cli(['fork', parentLog, '--at', '9', '--log', path.join(dir, 'never.jsonl')]);
    const cluster = await cli(['fork', 'parent', '--at', '9', '--nats', NATS_URL, '--prefix', prefix]);
    expect(embedded.stderr).toContain('FORK_POINT_OUT_OF_RANGE');
    expect(cluster.stderr).toContain('FORK_POINT_OUT_OF_RANGE');
    expect(cluster.code).toBe(embedded.code);
  }, 60_000);

  it('should refuse a fork of a run a core worker is running with FORK_RUN_STILL_RUNNING', async () => {
    const own = uniquePrefix();
    // A tool that takes a minute keeps the run under way while it is forked.
    const slow = await startWorkerProcess(flowPath, 'model,tool', { prefix: own, env: { ...env, BUMP_DELAY_MS: '60000' } });
    const holder = await startCoreWorker({ nc, flowPath, prefix: own, owner: 'holder', leaseMs: LEASE_MS, attemptTimeoutMs: 120_000 });
    try {
      let toolAsked: () => void = () => undefined;
      const asked = new Promise<void>((resolve) => (toolAsked = resolve));
      const run = await startRemoteRun({ nc, prefix: own, input: 'go', traceId: 'busy', onEvent: (event) => (event.type === 'tool.requested' ? toolAsked() : undefined) });
      await asked;
      const refused = await cli(['fork', 'busy', '--at', '1', '--nats', NATS_URL, '--prefix', own]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('FORK_RUN_STILL_RUNNING');
      run.detach();
    } finally {
      slow.kill('SIGKILL');
      await exited(slow);
      await holder.close();
      await removePrefix(nc, own);
    }
  }, 60_000);
});

describe('POST /api/runs/:id/fork on redflow serve --nats', () => {
  it('should start the fork on the cluster, with its lineage, and refuse a fork past the end with its code', async () => {
    const flowsDir = path.dirname(flowPath);
    const backend = await createNatsRunBackend({ nc, prefix, flowsDir });
    const server = await createRedflowServer({ backend, flowsDir, editorDir: path.join(dir, 'editor'), port: 0, env: {} });
    try {
      const answer = { action: 'final', message: 'forked over HTTP', confidence: 0.9 };
      const forked = await call(server, 'POST', '/api/runs/parent/fork', { body: { at: 3, answers: { 3: answer } } });
      expect(forked.status, forked.text).toBe(201);
      const { traceId } = forked.json as RunForkedResponse;
      const run = (await waitForRun(server, traceId, (r) => r.status === 'finished', 30_000)) as unknown as RunResponse;
      expect(run).toMatchObject({ outcome: { status: 'done', answer: 'forked over HTTP' } });
      expect(run.envelope.lineage?.parent.traceId).toBe('parent');
      const past = await call(server, 'POST', '/api/runs/parent/fork', { body: { at: 9 } });
      expect((past.json as { error: { code: string } }).error.code).toBe('FORK_POINT_OUT_OF_RANGE');
      const unknown = await call(server, 'POST', '/api/runs/no-such-run/fork', { body: { at: 1 } });
      expect(unknown.status).toBe(404);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('redflow eval --nats', () => {
  it('should give the same report for a suite run on the cluster as on this machine, against a changed prompt', async () => {
    const suite = path.join(dir, 'suite');
    await mkdir(suite, { recursive: true });
    for (const [name, input] of [['first', 'go'], ['second', 'again']] as const) {
      const traceId = `case-${name}`;
      await (await startRemoteRun({ nc, prefix, input, traceId })).result;
      const log = path.join(dir, `${name}.jsonl`);
      await writeFile(log, encodeJsonlLog((await store.read(traceId)).events));
      const added = await cli(['eval', 'add', log, '--suite', suite]);
      expect(added.code, added.stderr).toBe(0);
    }
    // The changed prompt: the same flow, with instructions.
    const flow = JSON.parse(await readFile(flowPath, 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
    const agent = flow.nodes.find((node) => node.id === 'agent') as { config: Record<string, unknown> };
    agent.config.instructions = 'Bump the counter three times, then say so.';
    const changed = path.join(path.dirname(flowPath), `changed-${prefix}.json`);
    await writeFile(changed, JSON.stringify(flow));
    try {
      const reports: Record<string, { cases: Record<string, unknown>[]; score: number; counts: unknown; seam: string }> = {};
      for (const where of ['embedded', 'cluster']) {
        const nats = where === 'cluster' ? ['--nats', NATS_URL, '--prefix', prefix] : [];
        const json = path.join(dir, `${where}.json`);
        const ran = await cli(['eval', suite, '--seam', 'all', '--flow', changed, '--out', path.join(dir, `out-${where}`), '--json', json, ...nats]);
        expect(ran.code, ran.stderr).toBe(0);
        reports[where] = JSON.parse(await readFile(json, 'utf8'));
      }
      const comparable = (report: (typeof reports)[string]) => ({
        score: report.score,
        counts: report.counts,
        seam: report.seam,
        cases: report.cases.map(({ name, result, score, checks, fork }) => ({ name, result, score, checks, fork })),
      });
      expect(comparable(reports.cluster as (typeof reports)[string])).toEqual(comparable(reports.embedded as (typeof reports)[string]));
      expect(reports.cluster?.cases.map((row) => row.result)).toEqual(['pass', 'pass']);
      // Each eval run's log is in the stream too: a fork of its case's log.
      const copied = (await readJsonlLog(path.join(dir, 'out-cluster', 'first.jsonl'))).events;
      expect((await store.read(copied[0]?.traceId as string)).events).toEqual(copied);
      expect(copied[1]).toMatchObject({ type: 'run.forked', data: { parent: { traceId: 'case-first' } } });
    } finally {
      await rm(changed, { force: true });
    }
  }, 120_000);
});

/** Runs the `redflow` command (with the tool's counter file set, for the forks that run here). */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env, NO_COLOR: '1' } });
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
