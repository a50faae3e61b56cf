import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { BIN, REPO, assertBuilt } from './cliHarness.js';

const flow = path.join(REPO, 'test/fixtures/slow/flow.json');

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('interrupting and timing out a run from the command line', () => {
  it('should record Ctrl-C (SIGINT) as an aborted run, cancel the tool call, and exit 1', async () => {
    assertBuilt();
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-sigint-'));
    try {
      const log = path.join(dir, 'run.jsonl');
      const child = spawn(process.execPath, [BIN, 'run', flow, '--log', log], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await waitFor(async () => (await readFile(log, 'utf8').catch(() => '')).includes('"tool.requested"'));
      const started = Date.now();
      child.kill('SIGINT');
      expect(await exited).toBe(1);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(stderr).toContain('RUN_ABORTED');
      const { events, problems } = await readJsonlLog(log);
      expect(problems).toEqual([]);
      expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { outcome: { reason: 'aborted' } } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('should end a run that outlives --timeout as timeout, exit 1', async () => {
    assertBuilt();
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-timeout-'));
    try {
      const child = spawn(process.execPath, [BIN, 'run', flow, '--timeout', '300', '--json'], { cwd: dir });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      expect(code).toBe(1);
      expect(JSON.parse(stdout).outcome).toMatchObject({ status: 'blocked', reason: 'timeout', error: { code: 'RUN_TIMEOUT' } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
