// End-to-end tests of `redflow diff` on real run logs: the real CLI (`node bin/redflow.js`, which
// runs the compiled dist/: `npm test` builds it first; with plain vitest, run `npm run build`
// before) runs order-status offline with scripted answers, then compares the logs.
import { appendFile, copyFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, example, redflow, tempDirs, writeIn } from './cliHarness.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

let cwd = '';
const logs = { recorded: '', again: '', otherCode: '' };

/** Runs order-status with `script` (the example's own answers when undefined) and returns its log. */
async function runOrderStatus(traceId: string, script?: unknown[]): Promise<string> {
  const args = ['run', example('order-status'), '--input', 'Where is order A-1001?', '--trace-id', traceId];
  if (script) args.push('--script', await writeIn(cwd, `${traceId}.answers.json`, script));
  const result = await redflow(args, { cwd });
  if (result.code !== 0) throw new Error(`run ${traceId} exited ${result.code}: ${result.stderr}`);
  return path.join(cwd, '.redflow', 'runs', `${traceId}.jsonl`);
}

beforeAll(async () => {
  assertBuilt();
  cwd = await dirs.make();
  [logs.recorded, logs.again, logs.otherCode] = await Promise.all([
    runOrderStatus('diff-recorded'),
    runOrderStatus('diff-again'),
    // The same first call; the second tracks another code, and the answer follows it.
    runOrderStatus('diff-other', [
      { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.55 },
      { action: 'tool', tool: 'track_shipment', input: { trackingCode: 'FS-00000' }, confidence: 0.8 },
      { action: 'final', message: 'I could not track it.', confidence: 0.4 },
    ]),
  ]);
}, 60_000);

describe('redflow diff', () => {
  it('should exit 0 and say the runs are the same for two runs of the same script, one row per iteration', async () => {
    const result = await redflow(['diff', logs.recorded, logs.again], { cwd });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rows = result.stdout.split('\n').filter((text) => /^. #\d/.test(text));
    expect(rows.map((text) => text.slice(2, 6).trim())).toEqual(['#1', '#2', '#3']);
    expect(rows[0]).toMatch(/tool lookup_order .* tool lookup_order/);
    expect(result.stdout).not.toContain('▶');
    expect(result.stdout).toMatch(/^same: the runs do not differ/m);
  });

  it('should exit 1, mark the first difference and show both values under the row', async () => {
    const result = await redflow(['diff', logs.recorded, logs.otherCode], { cwd });
    expect(result.code).toBe(1);
    const out = result.stdout.split('\n');
    const marked = out.filter((text) => text.startsWith('▶'));
    expect(marked).toHaveLength(1);
    expect(marked[0]).toMatch(/^▶ #2 .*✖ input, observation$/);
    expect(out).toContain('         input: a {"trackingCode":"FS-77812"} | b {"trackingCode":"FS-00000"}');
    expect(result.stdout).toMatch(/^\s+end .*✖ answer$/m);
    expect(result.stdout).toContain('differ: first at #2, input: a {"trackingCode":"FS-77812"}, b {"trackingCode":"FS-00000"}');
  });

  it('should print the diff as JSON with --json, and exit by the same rule', async () => {
    const result = await redflow(['diff', logs.otherCode, logs.recorded, '--json'], { cwd });
    expect(result.code).toBe(1);
    const diff = JSON.parse(result.stdout) as {
      same: boolean;
      first: unknown;
      iterations: { iteration: number; differences: string[]; a: { modelMs: number } | null }[];
      outcome: { differences: string[] };
      runs: { a: { traceId: string }; b: { traceId: string } };
    };
    expect(diff.same).toBe(false);
    expect(diff.first).toEqual({ iteration: 2, field: 'input', a: { trackingCode: 'FS-00000' }, b: { trackingCode: 'FS-77812' } });
    expect(diff.iterations.map((it) => it.differences)).toEqual([[], ['input', 'observation'], []]);
    expect(diff.iterations[0]?.a?.modelMs).toEqual(expect.any(Number));
    expect(diff.outcome.differences).toEqual(['answer']);
    expect([diff.runs.a.traceId, diff.runs.b.traceId]).toEqual(['diff-other', 'diff-recorded']);
    const same = await redflow(['diff', logs.recorded, logs.again, '--json'], { cwd });
    expect([same.code, (JSON.parse(same.stdout) as { same: boolean }).same]).toEqual([0, true]);
  });

  it('should fail with LOG_NOT_FOUND (exit 66) for a log that does not exist', async () => {
    const result = await redflow(['diff', logs.recorded, path.join(cwd, 'missing.jsonl')], { cwd });
    expect(result.code).toBe(66);
    expect(result.stderr).toMatch(/^error LOG_NOT_FOUND: no event log at .*missing\.jsonl$/m);
    expect(result.stdout).toBe('');
  });

  it('should fail with DIFF_LOG_UNREADABLE (exit 65) for a file that is not a log, and for a folder', async () => {
    const notALog = await redflow(['diff', example('order-status'), logs.recorded], { cwd });
    expect(notALog.code).toBe(65);
    expect(notALog.stderr).toMatch(/^error DIFF_LOG_UNREADABLE: .*flow\.json is not a run's log that can be read: line 1: LOG_RECORD_CORRUPT/m);
    expect(notALog.stderr).toMatch(/^hint: /m);
    const folder = await redflow(['diff', logs.recorded, cwd], { cwd });
    expect(folder.code).toBe(65);
    expect(folder.stderr).toContain('error DIFF_LOG_UNREADABLE');
  });

  it('should compare a log whose last record a crash tore up to that record, with a warning', async () => {
    const torn = path.join(cwd, 'torn.jsonl');
    await copyFile(logs.again, torn);
    await appendFile(torn, '0badc0de {"seq":13,"type":"run.compl');
    const result = await redflow(['diff', logs.recorded, torn], { cwd });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/torn\.jsonl: the last record is torn \(line 13\); compared up to it/);
  });

  it('should refuse a command line without two runs (exit 64)', async () => {
    const result = await redflow(['diff', logs.recorded], { cwd });
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/^error CLI_USAGE: which runs\?/m);
  });
});
