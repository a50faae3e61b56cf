import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, runCli } from '../support/cli.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { exited, removePrefix } from '../distributed/clusterSupport.js';
import { codeBlocks, readPage } from './docPages.js';

// The cluster part of docs/forks.md as written: its worker runs in the background, then its run,
// fork and tree commands run in order against the test server, on a prefix of their own. The
// tree looks as the page shows.

const page = readPage('docs/forks.md');
const blocks = codeBlocks(page);
const commands = blocks
  .filter((block) => block.lang === 'sh')
  .flatMap((block) => block.code.split('\n'))
  .filter((line) => line.startsWith('npx redflow ') && line.includes('--nats'));
const shownTree = blocks.find((block) => block.lang === '' && block.code.includes('run order-a1001'));
const PAGE_NATS = 'localhost:4222';
const prefix = uniquePrefix();

let dir: string;
let nc: NatsConnection;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-forks-cluster-doc-'));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'examples', 'order-status'), { recursive: true });
  nc = await connectTestServer('forks-cluster-doc');
});
afterAll(async () => {
  for (const worker of workers) worker.kill('SIGTERM');
  await Promise.all(workers.map((worker) => exited(worker)));
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

/** The arguments of a shell line, on the test server and prefix: quoted parts ("…" or '…') are one argument each. */
const argsOf = (command: string) => [
  ...[...command.replace(/ &$/, '').slice('npx redflow '.length).matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2] ?? m[3] ?? '').replace(PAGE_NATS, NATS_URL)),
  '--prefix',
  prefix,
];

/** Starts a command the page runs in the background (`… &`), once it says it is ready. */
function inBackground(args: readonly string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
  workers.push(child);
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('worker ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}) before it was ready: ${stderr}`)));
  });
}

describe('docs/forks.md on a cluster', () => {
  it('should fork a run of the cluster on it and show the fork under its parent', async () => {
    if (shownTree === undefined || commands.length < 4) throw new Error("docs/forks.md has lost its cluster's commands or its tree");
    let last;
    for (const command of commands) {
      if (command.endsWith(' &')) {
        await inBackground(argsOf(command));
        continue;
      }
      last = await runCli(argsOf(command), { cwd: dir, timeoutMs: 60_000 });
      expect(last.code, `${command}\n${last.stderr}`).toBe(0);
    }
    // The tree: the same shape as the page's, the fork's trace id aside.
    const shape = (text: string) => text.trim().split('\n').map((line) => line.replace(/→ run \S+/, '→ run <id>'));
    expect(shape(last?.stdout ?? '')).toEqual(shape(shownTree.code));
  }, 120_000);
});
