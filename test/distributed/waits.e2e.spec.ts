// A waiting run on a cluster of real processes: `redflow serve --nats`, a core worker and a
// model/tool worker (`redflow worker`, the built CLI). The run parks; its core worker is killed with
// SIGKILL; the answer, posted to the server, is taken by the core worker started after, which
// resumes the run to its end; the CLI answers on the cluster too (`redflow approve --nats`).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResponse } from '../../src/server/apiTypes.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { runCli } from '../support/cli.js';
import { echoEffects, waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';
import { ROOT, exited, removePrefix, startWorkerProcess } from './clusterSupport.js';

const BIN = path.join(ROOT, 'bin/redflow.js');
const prefix = uniquePrefix();
const children: ChildProcess[] = [];
let dir: string;
let nc: NatsConnection;

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist/nats/cluster/runAnswers.js'))) throw new Error('dist/ is not built: run `npm run build` first');
  nc = await connectTestServer('waits-e2e');
  dir = await mkdtemp(path.join(os.tmpdir(), 'redflow-waits-e2e-'));
  await writeWaitingFlow(path.join(dir, 'flows'), waitingFlow([waitAnswer.ask(), waitAnswer.echo('hello'), waitAnswer.final('echoed hello')], {}, 'cluster-waits'), 'cluster-waits.json');
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(children.map((child) => exited(child)));
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|REDFLOW_|NATS_)/.test(key)) env[key] = value;
  }
  return { ...env, NO_COLOR: '1' };
}

async function worker(roles: string): Promise<ChildProcess> {
  const child = await startWorkerProcess(path.join(dir, 'flows', 'cluster-waits.json'), roles, { prefix, env: childEnv(), extraArgs: ['--lease', '600'] });
  children.push(child);
  return child;
}

async function serve(): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--flows', 'flows', '--nats', NATS_URL, '--prefix', prefix], {
    cwd: dir,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const found = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (found) resolve(found[0]);
    });
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('exit', (code) => reject(new Error(`serve --nats exited (${code}): ${out}`)));
  });
}

async function api(url: string, method: string, route: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(new URL(route, url), {
    method,
    ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function until(url: string, traceId: string, status: string): Promise<RunResponse> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { json } = await api(url, 'GET', `/api/runs/${traceId}`);
    if (json.status === status) return json as unknown as RunResponse;
    if (Date.now() > deadline) throw new Error(`run ${traceId} is ${String(json.status)}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a waiting run on a cluster of processes', () => {
  it('should survive its core worker, and be resumed by the core worker that takes its answer', async () => {
    await worker('model,tool');
    const firstCore = await worker('core');
    const url = await serve();
    const started = await api(url, 'POST', '/api/runs', { flow: 'cluster-waits', input: 'hi' });
    expect(started.status, JSON.stringify(started.json)).toBe(201);
    const traceId = started.json.traceId as string;
    expect((await until(url, traceId, 'waiting')).waiting).toMatchObject({ kind: 'client', tool: 'ask_user' });

    firstCore.kill('SIGKILL');
    await exited(firstCore);
    // With no core worker, nobody can take the answer: said so (503), and the run still waits.
    const unanswered = await api(url, 'POST', `/api/runs/${traceId}/tool-results`, { ok: true, output: 'hello' });
    expect(unanswered.status).toBe(503);
    expect((unanswered.json.error as { code: string }).code).toBe('TRANSPORT_NO_RESPONDER');
    expect((await until(url, traceId, 'waiting')).waiting).toMatchObject({ kind: 'client' });

    await worker('core');
    const answered = await api(url, 'POST', `/api/runs/${traceId}/tool-results`, { ok: true, output: 'hello' });
    expect(answered.status, JSON.stringify(answered.json)).toBe(202);
    expect((await until(url, traceId, 'waiting')).waiting).toMatchObject({ kind: 'approval', tool: 'echo' });

    const approved = await runCli(['approve', traceId, '--nats', NATS_URL, '--prefix', prefix, '--reason', 'on the cluster'], { cwd: dir });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stderr).toContain('answer taken by core worker');
    const done = await until(url, traceId, 'finished');
    expect(done.outcome).toMatchObject({ status: 'done', answer: 'echoed hello' });
    const again = await runCli(['approve', traceId, '--nats', NATS_URL, '--prefix', prefix], { cwd: dir });
    expect(again.code).toBe(65);
    expect(again.stderr).toContain('RUN_ALREADY_FINISHED');

    const store = await openJetStreamEventStore(nc, { prefix });
    const { events } = await store.read(traceId);
    const count = (type: string) => events.filter((event) => event.type === type).length;
    expect(count('tool.completed')).toBe(2);
    expect(count('tool.approved')).toBe(1);
    expect(count('run.completed')).toBe(1);
    expect(await echoEffects(path.join(dir, 'flows'))).toEqual([`${traceId}:2`]);
  });

  it('should have `redflow run --nats` stop following a run that parks (exit 3), and `resume --nats` say it waits', async () => {
    const run = await runCli(['run', 'flows/cluster-waits.json', '--nats', NATS_URL, '--prefix', prefix, '--input', 'hi', '--trace-id', 'cli-parked'], { cwd: dir });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('waits for the result of ask_user');
    expect(run.stderr).toContain('redflow tool-result cli-parked --nats <url>');
    expect(run.stderr).toContain('input: {"question":"which text?"}');
    const resumed = await runCli(['resume', 'cli-parked', '--nats', NATS_URL, '--prefix', prefix], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(3);
    const answered = await runCli(['tool-result', 'cli-parked', '--nats', NATS_URL, '--prefix', prefix, '--error', 'no user here'], { cwd: dir });
    expect(answered.code, answered.stderr).toBe(0);
  });
});
