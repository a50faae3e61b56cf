import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { fold } from '../../src/events/evolve.js';

// Runs the built CLI (npm test builds dist/ first).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'bin/redflow.js');
const flow = path.join(root, 'test/fixtures/crash/flow.json');

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function redflow(args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, cwd: dir });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

let dir: string;
let baseline: { answer: string; events: number; keys: string[] };

async function counterLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-crash-'));
  const log = path.join(dir, 'baseline.jsonl');
  const counter = path.join(dir, 'baseline.count');
  const result = await redflow(['run', flow, '--input', 'go', '--log', log, '--trace-id', 'crash'], { COUNTER_FILE: counter });
  expect(result.code, result.stderr).toBe(0);
  const { events } = await readJsonlLog(log);
  baseline = { answer: result.stdout.trim(), events: events.length, keys: await counterLines(counter) };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Kills the run after event `k`, resumes it, and checks the invariants. */
async function crashAndResume(k: number): Promise<void> {
  const log = path.join(dir, `kill-${k}.jsonl`);
  const counter = path.join(dir, `kill-${k}.count`);
  const env = { COUNTER_FILE: counter };
  const killed = await redflow(['run', flow, '--input', 'go', '--log', log, '--trace-id', 'crash'], {
    ...env,
    REDFLOW_CRASH_AFTER_EVENT: String(k),
  });
  expect(killed.signal, `run killed after event ${k}`).toBe('SIGKILL');
  const before = await readJsonlLog(log);
  expect(before.events).toHaveLength(k);
  const completedBefore = before.events.filter((e) => e.type === 'tool.completed').length;
  // Killed at an event boundary: every executed call so far has its completion in the log.
  expect(await counterLines(counter)).toHaveLength(completedBefore);

  const resumed = await redflow(['resume', log], env);
  expect(resumed.code, `resume after event ${k}: ${resumed.stderr}`).toBe(0);
  expect(resumed.stdout.trim()).toBe(baseline.answer);

  const after = await readJsonlLog(log);
  expect(after.problems).toEqual([]);
  expect(after.events.slice(0, k)).toEqual(before.events);
  const completed = after.events.filter((e) => e.type === 'tool.completed');
  const keys = await counterLines(counter);
  // Each logged completed call happened exactly once, with the key the log holds for it.
  expect(keys).toEqual(completed.map((e) => (e.data as { idempotencyKey: string }).idempotencyKey));
  expect(keys).toEqual(baseline.keys);
  expect(fold(after.events).observability.outcome).toEqual(fold((await readJsonlLog(path.join(dir, 'baseline.jsonl'))).events).observability.outcome);
}

describe('a run killed with SIGKILL and resumed from its log (invariant 4)', () => {
  it('should reach the same outcome from every event boundary, each tool call made once', async () => {
    expect(baseline.events).toBeGreaterThan(10);
    const boundaries = Array.from({ length: baseline.events }, (_, i) => i + 1);
    // Two at a time: these machines have two cores.
    for (let i = 0; i < boundaries.length; i += 2) {
      await Promise.all(boundaries.slice(i, i + 2).map((k) => crashAndResume(k)));
    }
  }, 120_000);

  it('should survive being killed again while resuming', async () => {
    const log = path.join(dir, 'chain.jsonl');
    const counter = path.join(dir, 'chain.count');
    const env = { COUNTER_FILE: counter };
    const first = await redflow(['run', flow, '--input', 'go', '--log', log, '--trace-id', 'crash'], { ...env, REDFLOW_CRASH_AFTER_EVENT: '3' });
    expect(first.signal).toBe('SIGKILL');
    let attempts = 0;
    for (;;) {
      const { events } = await readJsonlLog(log);
      if (events.at(-1)?.type === 'run.completed') break;
      attempts++;
      const next = await redflow(['resume', log], { ...env, REDFLOW_CRASH_AFTER_EVENT: String(events.length + 3) });
      expect(next.signal === 'SIGKILL' || next.code === 0, next.stderr).toBe(true);
      expect(attempts).toBeLessThan(20);
    }
    expect(attempts).toBeGreaterThan(2);
    expect(await counterLines(counter)).toEqual(baseline.keys);
  }, 60_000);
});
