import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT, runCli } from '../support/cli.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { exited, removePrefix } from '../distributed/clusterSupport.js';
import { codeBlocks, readPage } from './docPages.js';

// The cluster part of docs/eval-suites.md as written: the page's suite is recorded and its flow
// changed as the page says (docs/eval-suites.md's own test runs those steps too), then its worker
// runs in the background and its `eval --nats` prints the table the page shows.

const page = readPage('docs/eval-suites.md');
const blocks = codeBlocks(page);
const shell = blocks.filter((block) => block.lang === 'sh');
const clusterBlock = shell.find((block) => block.code.includes('--nats'));
const shownTable = clusterBlock === undefined ? undefined : blocks.slice(blocks.indexOf(clusterBlock) + 1).find((block) => block.lang === '');
const editedCase = blocks.find((block) => block.lang === 'yaml');
const changedNodes = blocks.find((block) => block.lang === 'json');
const PAGE_NATS = 'localhost:4222';
const prefix = uniquePrefix();

let dir: string;
let nc: NatsConnection;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-cluster-doc-'));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'examples', 'order-status'), { recursive: true });
  nc = await connectTestServer('eval-cluster-doc');
});
afterAll(async () => {
  for (const worker of workers) worker.kill('SIGTERM');
  await Promise.all(workers.map((worker) => exited(worker)));
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

/** The arguments of a shell line (quoted parts are one argument each), on the test server and prefix when it names one. */
function argsOf(command: string): string[] {
  const args = [...command.replace(/ &$/, '').slice('npx redflow '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => (m[1] ?? m[2] ?? '').replace(PAGE_NATS, NATS_URL));
  return command.includes('--nats') ? [...args, '--prefix', prefix] : args;
}

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

describe('docs/eval-suites.md on a cluster', () => {
  it('should evaluate the suite against the changed flow on the cluster, printing the table it shows', async () => {
    if (clusterBlock === undefined || shownTable === undefined || editedCase === undefined || changedNodes === undefined) throw new Error("docs/eval-suites.md has lost its cluster's commands, its table, its case or its changed nodes");
    // The suite, as the page records it.
    for (const command of (shell[0]?.code ?? '').split('\n').filter((line) => line.startsWith('npx redflow '))) {
      const done = await runCli(argsOf(command), { cwd: dir, timeoutMs: 60_000 });
      expect(done.code, `${command}\n${done.stderr}`).toBe(0);
    }
    await writeFile(path.join(dir, /^# (\S+)/.exec(editedCase.code)?.[1] ?? 'missing'), editedCase.code);
    const flow = JSON.parse(await readFile(path.join(dir, 'examples', 'order-status', 'flow.json'), 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
    const changes = JSON.parse(changedNodes.code) as Record<string, Record<string, unknown>>;
    flow.nodes = flow.nodes.map((node) => {
      const change = changes[node.id];
      return change === undefined ? node : { ...node, config: node.id === 'model' ? change : { ...node.config, ...change } };
    });
    await writeFile(path.join(dir, 'examples', 'order-status', 'flow.changed.json'), JSON.stringify(flow));

    let last;
    for (const command of clusterBlock.code.split('\n').filter((line) => line.startsWith('npx redflow '))) {
      if (command.endsWith(' &')) {
        await inBackground(argsOf(command));
        continue;
      }
      last = await runCli(argsOf(command), { cwd: dir, timeoutMs: 60_000 });
    }
    // Below the page's --min-score? No threshold here: the table, and exit 0.
    expect(last?.code, last?.stderr).toBe(0);
    expect(last?.stdout).toBe(shownTable.code);
  }, 120_000);
});
