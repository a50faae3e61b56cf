import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { REPO_ROOT, runCli } from '../support/cli.js';

// The built CLI (npm test builds dist/ first) on the parent flow whose counter subagent is called
// twice, as a tool and by a delegation.
const parentFlow = path.join(REPO_ROOT, 'test/fixtures/subagents/parent.json');

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cli-subagents-'));
  const run = await runCli(['run', parentFlow, '--input', 'go', '--trace-id', 'tree', '--log', path.join(dir, 'tree.jsonl')], { cwd: dir, env: { COUNTER_FILE: path.join(dir, 'count') } });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout.trim()).toBe('the counter counted twice, twice');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('redflow and subagents', () => {
  it('replay --tree shows the run and the subagent run each call started, with their outcomes; --json gives the tree', async () => {
    const tree = await runCli(['replay', path.join(dir, 'tree.jsonl'), '--tree'], { cwd: dir });
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.stdout.trim().split('\n')).toEqual([
      'run tree  done (final_answer)  12 events',
      '├─ #1 counter → run tree-1  done (final_answer)  12 events',
      '└─ #2 counter → run tree-2  done (final_answer)  12 events',
    ]);
    const json = await runCli(['replay', path.join(dir, 'tree.jsonl'), '--tree', '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toMatchObject({
      traceId: 'tree',
      parent: null,
      calls: [
        { iteration: 1, tool: 'counter', childTraceId: 'tree-1', run: { traceId: 'tree-1', parent: { traceId: 'tree', iteration: 1, idempotencyKey: 'tree:1', tool: 'counter' }, calls: [] } },
        { iteration: 2, tool: 'counter', childTraceId: 'tree-2', run: { traceId: 'tree-2', outcome: { status: 'done' } } },
      ],
    });
    const refused = await runCli(['replay', path.join(dir, 'tree.jsonl'), '--tree', '--steps'], { cwd: dir });
    expect(refused.code).toBe(64);
  });

  it('replay --tree tells a subagent run whose log is missing from one whose log cannot be read, and says why', async () => {
    const elsewhere = await mkdtemp(path.join(tmpdir(), 'redflow-cli-subagents-tree-'));
    try {
      await copyFile(path.join(dir, 'tree.jsonl'), path.join(elsewhere, 'tree.jsonl'));
      // tree-1's log is not there; tree-2's path is a directory, which no log can be read from.
      await mkdir(path.join(elsewhere, 'tree-2.jsonl'));
      const tree = await runCli(['replay', path.join(elsewhere, 'tree.jsonl'), '--tree'], { cwd: elsewhere });
      expect(tree.code, tree.stderr).toBe(0);
      const lines = tree.stdout.trim().split('\n');
      expect(lines[1]).toBe('├─ #1 counter → run tree-1  no log found');
      expect(lines[2]).toMatch(/^└─ #2 counter → run tree-2  cannot read its log: .*EISDIR/);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('replay --steps names the subagent run on its call, and the call that started a subagent run on top of it', async () => {
    const parent = await runCli(['replay', path.join(dir, 'tree.jsonl'), '--steps'], { cwd: dir });
    expect(parent.stdout).toMatch(/^ {4}subagent run: tree-1 /m);
    expect(parent.stdout).toMatch(/^ {4}subagent run: tree-2 /m);
    const child = await runCli(['replay', path.join(dir, 'tree-2.jsonl'), '--steps', '--json'], { cwd: dir });
    expect(JSON.parse(child.stdout)).toMatchObject({ parent: { traceId: 'tree', iteration: 2, tool: 'counter' }, input: 'count to two again' });
    const text = await runCli(['replay', path.join(dir, 'tree-2.jsonl'), '--steps'], { cwd: dir });
    expect(text.stdout).toContain('subagent run of tree: its call of counter in iteration 2 (key tree:2)');
  });

  it("runs the README's example: the desk asks its researcher subagent, and replay --tree shows both runs", async () => {
    const example = path.join(REPO_ROOT, 'examples/subagents/flow.json');
    const run = await runCli(['run', example, '--input', 'Where is my order A-1001?', '--trace-id', 'desk-1'], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('Your order A-1001 has shipped with FastShip; its tracking code is FS-77812.');
    const tree = await runCli(['replay', '.redflow/runs/desk-1.jsonl', '--tree'], { cwd: dir });
    expect(tree.stdout.trim().split('\n')).toEqual(['run desk-1  done (final_answer)  8 events', '└─ #1 researcher → run desk-1-1  done (final_answer)  8 events']);
    const child = await runCli(['replay', '.redflow/runs/desk-1-1.jsonl', '--steps'], { cwd: dir });
    expect(child.stdout).toContain('subagent run of desk-1: its call of researcher in iteration 1 (key desk-1:1)');
    expect(child.stdout).toContain('Order A-1001: shipped with FastShip');
  });

  it('validate and run refuse a cycle of subagents with AGENT_REF_CYCLE (exit 65), naming the node', async () => {
    const flowOf = (next: string) => ({
      nodes: [
        { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3 } },
        { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [{ action: 'final', message: 'ok', confidence: 1 }] } },
        { id: 'next', type: 'agent.ref', config: { flow: next } },
      ],
      edges: [
        { id: 'e1', source: 'agent', target: 'model' },
        { id: 'e2', source: 'agent', target: 'next' },
      ],
    });
    await writeFile(path.join(dir, 'a.json'), JSON.stringify(flowOf('b.json')));
    await writeFile(path.join(dir, 'b.json'), JSON.stringify(flowOf('a.json')));
    const validated = await runCli(['validate', path.join(dir, 'a.json'), '--json'], { cwd: dir });
    expect(validated.code).toBe(65);
    expect(JSON.parse(validated.stdout).errors).toEqual([expect.objectContaining({ code: 'AGENT_REF_CYCLE', nodeId: 'next', path: 'nodes[2].config.flow' })]);
    const run = await runCli(['run', path.join(dir, 'a.json'), '--input', 'go'], { cwd: dir });
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('AGENT_REF_CYCLE');
  });
  it('resume of a caller killed after its subagent run ended leaves no lock of the dead process on the subagent\'s log', async () => {
    const folder = await mkdtemp(path.join(dir, 'stale-lock-'));
    const { events: child } = await readJsonlLog(path.join(dir, 'tree-1.jsonl'));
    const log = path.join(folder, 'stale.jsonl');
    const env = { COUNTER_FILE: path.join(folder, 'count') };
    // Killed right after the subagent run's last event is in its log: its log was never closed.
    const killed = await runCli(['run', parentFlow, '--input', 'go', '--trace-id', 'stale', '--log', log], { cwd: folder, env: { ...env, REDFLOW_CRASH_AFTER_EVENT: `stale-1:${child.length}` } });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(existsSync(path.join(folder, 'stale-1.jsonl.lock'))).toBe(true);
    const resumed = await runCli(['resume', log], { cwd: folder, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe('the counter counted twice, twice');
    expect((await readdir(folder)).filter((name) => name.includes('.lock'))).toEqual([]);
  });
});
