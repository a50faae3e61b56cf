// docs/a2a.md as written: its shell block serves the examples with `redflow serve --a2a` (a real
// child process of bin/redflow.js, on a free port instead of 4800), and its client, run as it is
// against that server, prints the output the page shows.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, codeBlocks, readPage } from './docPages.js';

const run = promisify(execFile);
const page = readPage('docs/a2a.md');
const blocks = codeBlocks(page);
const shell = blocks.find((block) => block.lang === 'sh' && block.code.includes('redflow serve'));
const client = blocks.find((block) => block.lang === 'ts' && block.code.includes('refund-client.ts'));
/** The output the page shows for the client: the bare block after it (a sentence between, so the page's generic block runner leaves it to this test). */
const shown = client === undefined ? undefined : blocks.slice(blocks.indexOf(client) + 1).find((block) => block.lang === '');

let child: ChildProcess | undefined;
let dir: string | undefined;
afterAll(async () => {
  if (child?.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('docs/a2a.md', () => {
  it("should serve the example with its shell block and print its client's output", async () => {
    if (shell === undefined || client === undefined) throw new Error('docs/a2a.md has lost its serve or client block');
    const token = /export REDFLOW_TOKEN=(\S+)/.exec(shell.code)?.[1];
    const args = /npx redflow (serve .*)$/m.exec(shell.code)?.[1]?.split(/\s+/) ?? [];
    expect(token).toBeDefined();
    expect(args).toEqual(expect.arrayContaining(['serve', '--a2a', '--flows', 'examples']));
    dir = await mkdtemp(path.join(ROOT, 'test-artifacts-a2a-doc-'));
    const served = args.map((arg, i) => (args[i - 1] === '--port' ? '0' : arg));
    child = spawn(process.execPath, ['bin/redflow.js', ...served, '--runs', path.join(dir, 'runs')], {
      cwd: ROOT,
      env: { ...process.env, REDFLOW_TOKEN: token, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const port = await new Promise<string>((resolve, reject) => {
      child?.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const found = /redflow serve: \S*http:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1];
        if (found !== undefined) resolve(found);
      });
      child?.once('exit', (code) => reject(new Error(`redflow serve exited (${String(code)}): ${out}`)));
    });

    const file = path.join(dir, 'refund-client.mts');
    await writeFile(file, client.code.replaceAll('127.0.0.1:4800', `127.0.0.1:${port}`));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: { ...process.env, REDFLOW_TOKEN: token }, timeout: 30_000 });
    expect(stdout).toBe(shown?.code);
  }, 40_000);
});
