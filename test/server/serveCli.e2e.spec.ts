// `redflow serve` as a user starts it: the real command (bin/redflow.js runs the compiled dist/:
// `npm test` builds first; with plain vitest, run `npm run build` before).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { CLI, STACK_FRAME, readVerifiedLog, runCli } from '../support/cli.js';
import { GATE_TOOL, answer, scriptedFlow, tempDirs } from './serverHarness.js';

const dirs = tempDirs();
beforeAll(() => {
  if (!existsSync(new URL('../../dist/cli/serveCommand.js', import.meta.url))) throw new Error('dist/ is not built: run `npm run build` first');
});
afterAll(() => dirs.cleanup());

/** The environment of the child: no token, no NATS (the test machine may set both). */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(OPENAI_|REDFLOW_|NATS_)/.test(key)) env[key] = value;
  }
  return { ...env, NO_COLOR: '1' };
}

/**
 * `redflow serve --port 0 --flows my-flows` in `cwd`: its URL once printed, its exit, what it wrote
 * to stderr so far, and a kill after 15 s (clear `killer` once it has exited).
 */
function startServe(cwd: string, extra: readonly string[] = []) {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--flows', 'my-flows', ...extra], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const found = /http:\/\/127\.0\.0\.1:(\d+)\/\S*/.exec(stdout);
      if (found) resolve(found[0]);
    });
    void exited.then((code) => reject(new Error(`serve exited (${code}) before printing a URL:\n${stdout}\n${stderr}`)));
  });
  return { child, exited, url, killer, stderr: () => stderr };
}

describe('redflow serve', () => {
  it('should print its URL, answer /api/health there, and stop cleanly on SIGTERM', async () => {
    const cwd = await dirs.make();
    const { child, exited, stderr, url: listening, killer } = startServe(cwd, ['--verbose', '--allow-files', path.dirname(GATE_TOOL)]);
    try {
      const url = await listening;
      expect(url).not.toContain(':0/');
      const health = await fetch(new URL('/api/health', url));
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ ok: true, mode: 'embedded' });
      // A run that waits at its gate (which nobody opens in that process) is under way at SIGTERM.
      const saved = await fetch(new URL('/api/flows/hello', url), {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(scriptedFlow([answer.gate(), answer.final('never')])),
      });
      expect(saved.status).toBe(201);
      const started = await fetch(new URL('/api/runs', url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ flow: 'hello', input: 'x' }) });
      const { traceId } = (await started.json()) as { traceId: string };
      const lastSeq = async () => ((await (await fetch(new URL(`/api/runs/${traceId}`, url))).json()) as { lastSeq: number }).lastSeq;
      while ((await lastSeq()) < 4) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(existsSync(path.join(cwd, 'my-flows', 'hello.json'))).toBe(true);
      // The run's log (in the default runs directory, as `redflow run`'s) records the abort.
      const { events } = await readVerifiedLog(path.join(cwd, '.redflow', 'runs', `${traceId}.jsonl`));
      expect(events.at(-1)?.data.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
      // --verbose logs each request.
      expect(stderr()).toMatch(/GET \/api\/health 200/);
      expect(stderr()).not.toMatch(STACK_FRAME);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });

  it('should log a client\'s bad input as one line without a stack, and keep stacks for the server\'s own failures', async () => {
    const cwd = await dirs.make();
    const { child, exited, stderr, url: listening, killer } = startServe(cwd);
    try {
      const url = await listening;
      // The id looks like a path on the server, so the answer withholds it: the log has it, on one line.
      const bad = await fetch(new URL('/api/flows/%2Fetc%2Fpasswd', url));
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('FLOW_ID_INVALID');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr()).not.toMatch(STACK_FRAME);
      const lines = stderr().split('\n').filter((line) => line.includes('FLOW_ID_INVALID'));
      expect(lines, stderr()).toHaveLength(1);
      expect(lines[0]).toContain('GET /api/flows/%2Fetc%2Fpasswd: 400 FLOW_ID_INVALID');
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });

  it('should refuse to listen on 0.0.0.0 without a token (exit 64, with a hint)', async () => {
    const cwd = await dirs.make();
    const result = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], { cwd, env: { NATS_URL: '' } });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('error SERVE_TOKEN_REQUIRED');
    expect(result.stderr).toContain('hint: ');
    expect(result.stderr).toContain('--token');
  });

  it('should reject a bad --port and show its help', async () => {
    const cwd = await dirs.make();
    const bad = await runCli(['serve', '--port', '70000'], { cwd, env: { NATS_URL: '' } });
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('--port must be a whole number');
    const help = await runCli(['serve', '--help'], { cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: redflow serve');
    expect(help.stdout).toContain('--nats <url>');
  });
});
