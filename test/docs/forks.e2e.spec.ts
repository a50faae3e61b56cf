import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { codeBlocks, readPage, redflowArgs, redflowLines } from './docPages.js';

// docs/forks.md as written: its commands, run in order on a copy of the example, record a run and
// fork it at iteration 2 with another model: the page's local model server is a fake one that
// speaks the OpenAI wire protocol, at its own address. The tree looks as the page shows.

const page = readPage('docs/forks.md');
const blocks = codeBlocks(page);
const shell = blocks.filter((block) => block.lang === 'sh');
const shownTree = blocks.find((block) => block.lang === '' && block.code.includes('fork at #2'));
const PAGE_MODEL_URL = 'http://localhost:11434/v1';

let dir: string;
let model: FakeChatServer;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-forks-doc-'));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'examples', 'order-status'), { recursive: true });
  model = await startFakeChatCompletionsServer();
  model.respondWith(() => ({ kind: 'completion', content: JSON.stringify({ action: 'final', message: 'Your order A-1001 is with FastShip.', confidence: 0.8 }) }));
});
afterAll(async () => {
  await model.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('docs/forks.md', () => {
  it('should record a run, fork it at iteration 2 with another model and show the fork under its parent', async () => {
    if (shownTree === undefined || shell.length < 2) throw new Error('docs/forks.md has lost its commands or its tree');
    let last;
    // The cluster's commands (--nats) are run by docs/forksOnCluster.e2e.spec.ts, against a cluster.
    for (const command of shell.flatMap((block) => redflowLines(block.code)).filter((line) => !line.includes('--nats'))) {
      const args = redflowArgs(command).map((arg) => arg.replace(PAGE_MODEL_URL, model.baseUrl));
      last = await runCli(args, { cwd: dir, timeoutMs: 60_000 });
      expect(last.code, `${command}\n${last.stderr}`).toBe(0);
    }
    // The new model was asked once, for iteration 2, having seen the order the parent looked up.
    expect(model.requests).toHaveLength(1);
    expect(JSON.stringify(model.requests[0]?.body)).toContain('FS-77812');
    const fork = (await readFile(path.join(dir, 'runs', 'fork.jsonl'), 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line.slice(9)) as { type: string });
    expect(fork.slice(0, 2).map((event) => event.type)).toEqual(['run.started', 'run.forked']);
    // The tree: the same shape as the page's, trace ids aside.
    const shape = (text: string) => text.trim().split('\n').map((line) => line.replace(/run \S+/, 'run <id>'));
    expect(shape(last?.stdout ?? '')).toEqual(shape(shownTree.code));
  }, 120_000);
});
