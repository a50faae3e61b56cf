import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { codeBlocks, readPage, redflowArgs, redflowLines } from './docPages.js';

// docs/diff.md as written: its commands, run in order on a copy of the example with the answers
// file it shows, print the diff it shows (times aside: they are the runs' own) and exit 1; two runs
// of the same answers are the same, exit 0.

const page = readPage('docs/diff.md');
const blocks = codeBlocks(page);
const commands = blocks.find((block) => block.lang === 'sh');
const answers = blocks.find((block) => block.lang === 'json');
const shown = commands === undefined ? undefined : blocks.slice(blocks.indexOf(commands) + 1).find((block) => block.lang === '');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-diff-doc-'));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'examples', 'order-status'), { recursive: true });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Durations are the runs' own: each `   N ms` (with the spaces padding it) as ` _ ms`. */
const withoutTimes = (text: string) => text.replace(/ *\d+ ms/g, ' _ ms');

describe('docs/diff.md', () => {
  it('should run two runs and print the diff it shows, exiting 1', async () => {
    if (commands === undefined || answers === undefined || shown === undefined) throw new Error('docs/diff.md has lost its commands, its answers file or its diff');
    const lines = redflowLines(commands.code);
    expect(lines).toHaveLength(3);
    const script = /--script (\S+)/.exec(commands.code)?.[1] ?? 'missing';
    await writeFile(path.join(dir, script), answers.code);
    const codes: (number | null)[] = [];
    let last;
    for (const command of lines) {
      last = await runCli(redflowArgs(command), { cwd: dir, timeoutMs: 60_000 });
      codes.push(last.code);
    }
    // The two runs answer; the diff finds they differ.
    expect(codes, last?.stderr).toEqual([0, 0, 1]);
    expect(withoutTimes(last?.stdout ?? '')).toBe(withoutTimes(shown.code));
  }, 120_000);

  it('should find two runs of the same answers the same, exiting 0', async () => {
    const again = await runCli(['run', 'examples/order-status/flow.json', '--input', 'Where is order A-1001?', '--trace-id', 'recorded-again'], { cwd: dir, timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    const result = await runCli(['diff', '.redflow/runs/recorded.jsonl', '.redflow/runs/recorded-again.jsonl'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('same: the runs do not differ (ids, times and durations aside)');
    expect(page).toContain('`redflow diff .redflow/runs/recorded.jsonl .redflow/runs/recorded-again.jsonl`');
  }, 60_000);
});
