import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';

// The built CLI (npm test builds dist/ first), on a copy of the crash fixture with a file memory.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'bin/redflow.js');

let dir: string;

function redflow(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, NO_COLOR: '1', COUNTER_FILE: path.join(dir, 'count'), ...env }, cwd: dir });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-memory-crash-'));
  const flow = JSON.parse(await readFile(path.join(root, 'test/fixtures/crash/flow.json'), 'utf8')) as {
    nodes: object[];
    edges: object[];
  };
  flow.nodes.push({ id: 'memory', type: 'memory.kv', config: { store: 'file', path: 'conversations' } });
  flow.edges.push({ id: 'e4', source: 'agent', target: 'memory' });
  await writeFile(path.join(dir, 'flow.json'), JSON.stringify(flow));
  await copyFile(path.join(root, 'test/fixtures/crash/bump.mjs'), path.join(dir, 'bump.mjs'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function turns(conversation: string): Promise<{ traceId: string }[]> {
  const text = await readFile(path.join(dir, 'conversations', `${conversation}.json`), 'utf8').catch(() => '{}');
  return ((JSON.parse(text) as { turns?: { traceId: string }[] }).turns ?? []);
}

describe('a run with a conversation killed around its ending', () => {
  it.each(['memory.requested', 'memory.saved', 'run.completed'])('should keep the turn, once, when killed right after %s and resumed', async (type) => {
    const conversation = `c-${type.replace('.', '-')}`;
    const full = path.join(dir, `${conversation}-full.jsonl`);
    const baseline = await redflow(['run', 'flow.json', '--input', 'go', '--conversation', `${conversation}-baseline`, '--log', full]);
    expect(baseline.code, baseline.stderr).toBe(0);
    const at = (await readJsonlLog(full)).events.findIndex((event) => event.type === type) + 1;
    expect(at).toBeGreaterThan(0);

    const log = path.join(dir, `${conversation}.jsonl`);
    const killed = await redflow(['run', 'flow.json', '--input', 'go', '--conversation', conversation, '--log', log, '--trace-id', conversation], {
      REDFLOW_CRASH_AFTER_EVENT: String(at),
    });
    expect(killed.signal).toBe('SIGKILL');
    expect((await readJsonlLog(log)).events.at(-1)?.type).toBe(type);

    const resumed = await redflow(['resume', log]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await turns(conversation)).map((turn) => turn.traceId)).toEqual([conversation]);
    expect((await readJsonlLog(log)).events.at(-1)?.type).toBe('run.completed');
  }, 60_000);

  it('should refuse a conversation whose memory file is damaged with MEMORY_FAILED, exit 65, and leave no log', async () => {
    await mkdir(path.join(dir, 'conversations'), { recursive: true });
    await writeFile(path.join(dir, 'conversations', 'damaged.json'), '{"turns": [');
    const log = path.join(dir, 'damaged.jsonl');
    const result = await redflow(['run', 'flow.json', '--input', 'go', '--conversation', 'damaged', '--log', log]);
    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).toContain('MEMORY_FAILED');
    expect(existsSync(log)).toBe(false);
  });
});
