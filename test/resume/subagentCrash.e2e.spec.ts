import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';

// Runs the built CLI (npm test builds dist/ first).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'bin/redflow.js');
// The parent calls its counter subagent twice (a tool call, then a delegation); each counter run bumps twice.
const flow = path.join(root, 'test/fixtures/subagents/parent.json');
const TRACE = 'sc';

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function redflow(cwd: string, args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

let dir: string;

/** Every run a folder holds: trace id → its log's events (each log read whole, without a problem). */
async function logsIn(folder: string): Promise<Map<string, AgentEvent[]>> {
  const logs = new Map<string, AgentEvent[]>();
  for (const file of (await readdir(folder)).filter((name) => name.endsWith('.jsonl')).sort()) {
    const read = await readJsonlLog(path.join(folder, file));
    expect(read.problems, file).toEqual([]);
    logs.set(file.replace(/\.jsonl$/, ''), [...read.events]);
  }
  return logs;
}

async function counterLines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

let baseline: { answer: string; logs: Map<string, AgentEvent[]>; keys: string[] };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-subagent-crash-'));
  const folder = path.join(dir, 'baseline');
  await mkdir(folder);
  const counter = path.join(folder, 'count');
  const result = await redflow(folder, ['run', flow, '--input', 'go', '--log', path.join(folder, `${TRACE}.jsonl`), '--trace-id', TRACE], { COUNTER_FILE: counter });
  expect(result.code, result.stderr).toBe(0);
  baseline = { answer: result.stdout.trim(), logs: await logsIn(folder), keys: await counterLines(counter) };
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Checks a folder whose run has finished against the uninterrupted run: the same runs, outcomes and effects, each once. */
async function expectSameAsBaseline(folder: string, counter: string): Promise<void> {
  const logs = await logsIn(folder);
  // The same runs: the parent and one child run per call, no other.
  expect([...logs.keys()]).toEqual([...baseline.logs.keys()]);
  for (const [traceId, events] of logs) {
    expect(events.filter((event) => event.type === 'run.started'), traceId).toHaveLength(1);
    expect(events.filter((event) => event.type === 'run.completed' || event.type === 'run.failed'), traceId).toHaveLength(1);
    expect(fold(events).observability.outcome, traceId).toEqual(fold(baseline.logs.get(traceId) ?? []).observability.outcome);
    // Each completed call of the run was made once, with the key its log holds for it.
    const keys = events.filter((event) => event.type === 'tool.requested').map((event) => (event.data as { idempotencyKey: string }).idempotencyKey);
    expect(new Set(keys).size, traceId).toBe(keys.length);
  }
  // Every effect of the children's tools happened exactly once.
  expect(await counterLines(counter)).toEqual(baseline.keys);
}

/** Kills the run after event `seq` of run `traceId` (the parent or a child), resumes the parent, and checks the invariants. */
async function crashAndResume(traceId: string, seq: number): Promise<void> {
  const folder = path.join(dir, `kill-${traceId}-${seq}`);
  await mkdir(folder);
  const counter = path.join(folder, 'count');
  const log = path.join(folder, `${TRACE}.jsonl`);
  const killed = await redflow(folder, ['run', flow, '--input', 'go', '--log', log, '--trace-id', TRACE], {
    COUNTER_FILE: counter,
    REDFLOW_CRASH_AFTER_EVENT: `${traceId}:${seq}`,
  });
  expect(killed.signal, `killed after ${traceId}:${seq}: ${killed.stderr}`).toBe('SIGKILL');
  expect((await logsIn(folder)).get(traceId), `${traceId} stops at ${seq}`).toHaveLength(seq);

  const resumed = await redflow(folder, ['resume', log], { COUNTER_FILE: counter });
  expect(resumed.code, `resume after ${traceId}:${seq}: ${resumed.stderr}`).toBe(0);
  expect(resumed.stdout.trim()).toBe(baseline.answer);
  await expectSameAsBaseline(folder, counter);
}

describe('a parent and its subagent killed with SIGKILL at every event, then resumed (invariant 4 across runs)', () => {
  it('should reach the same outcomes from every event of every run, each child run started once and each tool call made once', async () => {
    expect([...baseline.logs.keys()].sort()).toEqual([TRACE, `${TRACE}-1`, `${TRACE}-2`].sort());
    expect(baseline.keys).toEqual([`${TRACE}-1:1`, `${TRACE}-1:2`, `${TRACE}-2:1`, `${TRACE}-2:2`]);
    const points = [...baseline.logs].flatMap(([traceId, events]) => events.map((event) => [traceId, event.seq] as const));
    expect(points.length).toBeGreaterThan(30);
    // Two at a time: these machines have two cores.
    for (let i = 0; i < points.length; i += 2) {
      await Promise.all(points.slice(i, i + 2).map(([traceId, seq]) => crashAndResume(traceId, seq)));
    }
  }, 300_000);

  it('should survive being killed again and again while resuming, in the parent and in each child', async () => {
    const folder = path.join(dir, 'chain');
    await mkdir(folder);
    const counter = path.join(folder, 'count');
    const log = path.join(folder, `${TRACE}.jsonl`);
    // Each kill point lies past what the log holds by then (a resumed run adds run.resumed events).
    const kills = [`${TRACE}-1:3`, `${TRACE}-1:8`, `${TRACE}:8`, `${TRACE}-2:1`, `${TRACE}-2:9`, `${TRACE}:15`];
    const first = await redflow(folder, ['run', flow, '--input', 'go', '--log', log, '--trace-id', TRACE], { COUNTER_FILE: counter, REDFLOW_CRASH_AFTER_EVENT: kills[0] as string });
    expect(first.signal).toBe('SIGKILL');
    for (const kill of kills.slice(1)) {
      const next = await redflow(folder, ['resume', log], { COUNTER_FILE: counter, REDFLOW_CRASH_AFTER_EVENT: kill });
      expect(next.signal, `${kill}: ${next.stderr}`).toBe('SIGKILL');
    }
    const last = await redflow(folder, ['resume', log], { COUNTER_FILE: counter });
    expect(last.code, last.stderr).toBe(0);
    expect(last.stdout.trim()).toBe(baseline.answer);
    await expectSameAsBaseline(folder, counter);
    // Each run was resumed as often as it was killed while it ran.
    const logs = await logsIn(folder);
    expect(logs.get(`${TRACE}-1`)?.filter((event) => event.type === 'run.resumed')).toHaveLength(2);
    expect(logs.get(`${TRACE}-2`)?.filter((event) => event.type === 'run.resumed')).toHaveLength(2);
  }, 60_000);
});
