// A waiting run survives the death of `redflow serve`: the wait is in the run's log, not in the
// process. The real command is started, the run parks, the server is killed with SIGKILL and
// started again, and the answers posted then resume the run to its end, exactly once.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResponse } from '../../src/server/apiTypes.js';
import { CLI, readVerifiedLog, runCli } from '../support/cli.js';
import { echoEffects, waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';
import { tempDirs } from './serverHarness.js';

const dirs = tempDirs();
const children = new Set<ChildProcessWithoutNullStreams>();
beforeAll(() => {
  if (!existsSync(new URL('../../dist/server/embeddedRunBackend.js', import.meta.url))) throw new Error('dist/ is not built: run `npm run build` first');
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await dirs.cleanup();
});

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|REDFLOW_|NATS_)/.test(key)) env[key] = value;
  }
  return { ...env, NO_COLOR: '1' };
}

/** Starts `redflow serve --flows flows --port 0` in `cwd` and resolves with its URL once it listens. */
async function serve(cwd: string): Promise<{ url: string; child: ChildProcessWithoutNullStreams }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--flows', 'flows'], { cwd, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const found = /http:\/\/127\.0\.0\.1:\d+/.exec(stdout);
      if (found) resolve(found[0]);
    });
    child.once('close', (code) => reject(new Error(`serve exited (${code}):\n${stdout}\n${stderr}`)));
  });
  return { url, child };
}

async function killHard(child: ChildProcessWithoutNullStreams): Promise<void> {
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGKILL');
  await closed;
  children.delete(child);
}

async function api(url: string, method: string, route: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(new URL(route, url), {
    method,
    ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function until(url: string, traceId: string, status: string): Promise<RunResponse> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { json } = await api(url, 'GET', `/api/runs/${traceId}`);
    if (json.status === status) return json as unknown as RunResponse;
    if (Date.now() > deadline) throw new Error(`run ${traceId} is ${String(json.status)}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a waiting run and a server killed with SIGKILL', () => {
  it('should wait through two restarts, take each answer once, and finish once', async () => {
    const cwd = await dirs.make('redflow-wait-restart-');
    const flowsDir = path.join(cwd, 'flows');
    await writeWaitingFlow(flowsDir, waitingFlow([waitAnswer.ask(), waitAnswer.echo('hello'), waitAnswer.final('echoed hello')]), 'waits.json');

    let server = await serve(cwd);
    const started = await api(server.url, 'POST', '/api/runs', { flow: 'waits', input: 'hi' });
    expect(started.status).toBe(201);
    const traceId = started.json.traceId as string;
    const first = await until(server.url, traceId, 'waiting');
    expect(first.waiting).toMatchObject({ kind: 'client', tool: 'ask_user' });
    await killHard(server.child);

    server = await serve(cwd);
    expect((await until(server.url, traceId, 'waiting')).waiting).toEqual(first.waiting);
    const result = await api(server.url, 'POST', `/api/runs/${traceId}/tool-results`, { ok: true, output: 'hello' });
    expect(result.status, JSON.stringify(result.json)).toBe(202);
    expect((await until(server.url, traceId, 'waiting')).waiting).toMatchObject({ kind: 'approval', tool: 'echo' });
    await killHard(server.child);

    // The CLI answers the same server's runs by its API.
    server = await serve(cwd);
    const approved = await runCli(['approve', traceId, '--server', server.url, '--reason', 'after two restarts'], { cwd });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stderr).toContain('answer taken');
    const done = await until(server.url, traceId, 'finished');
    expect(done.outcome).toMatchObject({ status: 'done', answer: 'echoed hello' });
    const again = await api(server.url, 'POST', `/api/runs/${traceId}/approval`, { decision: 'approve' });
    expect(again.status).toBe(409);
    await killHard(server.child);

    const { events } = await readVerifiedLog(path.join(cwd, '.redflow', 'runs', `${traceId}.jsonl`));
    const count = (type: string) => events.filter((event) => event.type === type).length;
    expect(count('tool.completed')).toBe(2);
    expect(count('tool.approved')).toBe(1);
    expect(count('run.completed')).toBe(1);
    expect(count('run.failed')).toBe(0);
    expect(await echoEffects(flowsDir)).toEqual([`${traceId}:2`]);
  });

  it('should end, after a restart, a wait whose deadline passed while no server ran', async () => {
    const cwd = await dirs.make('redflow-wait-expiry-');
    await writeWaitingFlow(path.join(cwd, 'flows'), waitingFlow([waitAnswer.ask(), waitAnswer.final('never')], { waitTimeoutMs: 500 }), 'waits.json');
    let server = await serve(cwd);
    const traceId = (await api(server.url, 'POST', '/api/runs', { flow: 'waits', input: 'hi' })).json.traceId as string;
    await until(server.url, traceId, 'waiting');
    await killHard(server.child);
    await new Promise((resolve) => setTimeout(resolve, 600));
    server = await serve(cwd);
    const ended = await until(server.url, traceId, 'finished');
    expect(ended.outcome).toMatchObject({ status: 'blocked', reason: 'wait_expired', error: { code: 'WAIT_EXPIRED' } });
    await killHard(server.child);
  });
});
