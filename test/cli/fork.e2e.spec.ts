import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ALLOW_EXAMPLES, assertBuilt, example, parseLog, readText, tempDirs, type LogRecord } from './cliHarness.js';

// `redflow fork`: the real CLI forks a recorded run of the order-status example (scripted model,
// two tool modules) and goes on live; a fork killed mid-run goes on with `redflow resume`.

const dirs = tempDirs();
let dir: string;
let parentLog: string;
let parent: LogRecord[];
let parentTraceId: string;

beforeAll(async () => {
  assertBuilt();
  dir = await dirs.make();
  parentLog = path.join(dir, 'parent.jsonl');
  const ran = await runCli(['run', example('order-status'), '--input', 'Where is A-1001?', '--log', parentLog, ...ALLOW_EXAMPLES], { cwd: dir });
  expect(ran.code).toBe(0);
  parent = parseLog(await readText(parentLog));
  parentTraceId = (parent[0] as unknown as { traceId: string }).traceId;
});

afterAll(() => dirs.cleanup());

const final = (message: string) => JSON.stringify({ action: 'final', message, confidence: 0.9 });

describe('redflow fork', () => {
  it('should start a new run from the parent\'s prefix and go on live with the answer given for an iteration', async () => {
    const log = path.join(dir, 'fork-answer.jsonl');
    const forked = await runCli(['fork', parentLog, '--at', '2', '--answer', `2=${final('Forked answer.')}`, '--log', log, '--json', ...ALLOW_EXAMPLES], { cwd: dir });
    expect(forked.stderr).toBe('');
    expect(forked.code).toBe(0);
    const result = JSON.parse(forked.stdout) as { traceId: string; outcome: { answer: string }; envelope: { lineage: unknown } };
    expect(result.outcome.answer).toBe('Forked answer.');
    expect(result.envelope.lineage).toEqual({ parent: { traceId: parentTraceId, log: parentLog }, atSeq: 5 });
    const records = parseLog(await readText(log));
    expect(records.slice(0, 2).map((r) => r.type)).toEqual(['run.started', 'run.forked']);
    expect(records.slice(2, 6).map((r) => r.type)).toEqual(parent.slice(1, 5).map((r) => r.type));
    // The parent's log is untouched, and `replay --tree` shows the fork under it.
    expect(parseLog(await readText(parentLog))).toEqual(parent);
    const tree = await runCli(['replay', parentLog, '--tree'], { cwd: dir });
    expect(tree.code).toBe(0);
    expect(tree.stdout).toMatch(new RegExp(`fork at #2 → run ${result.traceId}\\s+done \\(final_answer\\)`));
    const replayed = await runCli(['replay', log], { cwd: dir });
    expect(replayed.stdout).toContain(`forked from run ${parentTraceId} after its event 5 (${parentLog})`);
    const fromFork = await runCli(['replay', log, '--tree'], { cwd: dir });
    expect(fromFork.stdout.split('\n')[0]).toContain(parentTraceId);
  });

  it('should go on with `redflow resume` after the fork is killed mid-run, with its changes', async () => {
    const log = path.join(dir, 'fork-killed.jsonl');
    // The fork's log: run.started, run.forked, 4 parent events, then run.resumed (7), iteration 2 (8-10): killed after its tool call.
    const killed = await runCli(['fork', parentLog, '--at', '2', '--tool-result', '2={"status":"lost"}', '--answer', `3=${final('Lost, sorry.')}`, '--log', log, ...ALLOW_EXAMPLES], {
      cwd: dir,
      env: { REDFLOW_CRASH_AFTER_EVENT: '10' },
    });
    expect(killed.signal).toBe('SIGKILL');
    const resumed = await runCli(['resume', log, '--json', ...ALLOW_EXAMPLES], { cwd: dir });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect((JSON.parse(resumed.stdout) as { outcome: { answer: string } }).outcome.answer).toBe('Lost, sorry.');
    const records = parseLog(await readText(log));
    expect(records.find((r) => r.type === 'tool.completed' && r.iteration === 2)?.data).toMatchObject({ ok: true, output: { status: 'lost' } });
    expect(records.filter((r) => r.type === 'run.resumed')).toHaveLength(2);
  });

  it('should refuse bad inputs each with its code and exit code', async () => {
    const past = await runCli(['fork', parentLog, '--at', '9', ...ALLOW_EXAMPLES], { cwd: dir });
    expect(past.code).toBe(65);
    expect(past.stderr).toContain('FORK_POINT_OUT_OF_RANGE');
    const zero = await runCli(['fork', parentLog, '--at', '0'], { cwd: dir });
    expect(zero.stderr).toContain('FORK_POINT_OUT_OF_RANGE');
    const missing = await runCli(['fork', path.join(dir, 'nope.jsonl'), '--at', '1'], { cwd: dir });
    expect(missing.stderr).toContain('LOG_NOT_FOUND');
    const running = path.join(dir, 'running.jsonl');
    await writeFile(running, (await readText(parentLog)).split('\n').slice(0, 3).join('\n') + '\n');
    await writeFile(`${running}.lock`, `${process.pid}\n`);
    const busy = await runCli(['fork', running, '--at', '1'], { cwd: dir });
    expect(busy.stderr).toContain('FORK_RUN_STILL_RUNNING');
    const torn = path.join(dir, 'corrupt.jsonl');
    await writeFile(torn, (await readText(parentLog)).replace('"iteration":1', '"iteration":4'));
    const corrupt = await runCli(['fork', torn, '--at', '1'], { cwd: dir });
    expect(corrupt.stderr).toContain('LOG_RECORD_CORRUPT');
    const usage = await runCli(['fork', parentLog], { cwd: dir });
    expect(usage.code).toBe(64);
  });
});
