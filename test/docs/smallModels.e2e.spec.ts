import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { codeBlocks, readPage } from './docPages.js';

// docs/small-models.md as a newcomer follows it: its example model server started as the page
// says, each `redflow run` of the page run as written, printing what the page shows (trace ids and
// durations aside).

const page = readPage('docs/small-models.md');
const blocks = codeBlocks(page);

/** Each `redflow run` command of the page with the output block shown right after it. */
const runs = blocks.flatMap((block, at) => {
  const next = blocks[at + 1];
  if (block.lang !== 'sh' || !block.code.startsWith('redflow run') || next?.lang !== '') return [];
  const args = [...block.code.trim().slice('redflow '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
  return [{ args: args.map((arg) => (arg.startsWith('examples/') ? path.join(REPO_ROOT, arg) : arg)), shown: next.code }];
});

/** What may differ between two runs: the trace id, durations, and the columns they shift. */
const normal = (text: string) =>
  text
    .replace(/^run \S+$/m, 'run <trace id>')
    .replace(/\s+(<ms>|\d+ ms)/g, ' <ms>')
    .replace(/[ \t]+/g, ' ')
    .trim();

let server: ChildProcess;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-small-models-'));
  // The page's first block: `node examples/small-model/server.mjs &`.
  expect(blocks[0]?.code.trim()).toBe('node examples/small-model/server.mjs &');
  server = spawn(process.execPath, [path.join(REPO_ROOT, 'examples/small-model/server.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.stdout?.once('data', () => resolve());
  });
});

afterAll(async () => {
  server?.kill();
  await rm(dir, { recursive: true, force: true });
});

describe('docs/small-models.md, run as written against its local model server', () => {
  it('should show two runs: the default one blocked on the first prose answer, the repairing one completed', () => {
    expect(runs.map((run) => path.basename(run.args[1] ?? ''))).toEqual(['strict.json', 'flow.json']);
  });

  it.each(runs.map((run) => [path.basename(run.args[1] ?? ''), run] as const))('should print what the page shows for %s', async (_name, run) => {
    const result = await runCli(run.args, { cwd: dir });
    expect(normal(result.stderr + result.stdout)).toBe(normal(run.shown));
    expect(result.code).toBe(run.args[1]?.endsWith('strict.json') ? 1 : 0);
  });
});

