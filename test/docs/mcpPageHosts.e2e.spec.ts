// The cluster and Node-RED sections of docs/mcp.md run as written: the cluster's commands start
// real `redflow worker` processes on the shared NATS server (each on a prefix of its own, added to
// the commands) and ask them for a run; the Node-RED node is loaded, as the page shows it, into a
// real Node-RED with an agent and a scripted model. Both read the shopping list of
// examples/mcp-filesystem through the MCP filesystem server.
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { CLI, runCli } from '../support/cli.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { removePrefix } from '../distributed/clusterSupport.js';
import { helper, loadFlow, nextMessage, withUserDir } from '../node-red/nodeRedHarness.js';
import { ROOT, codeBlocks, section } from './docPages.js';

const EXAMPLE = path.join(ROOT, 'examples/mcp-filesystem');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-hosts-doc-'));
  await cp(EXAMPLE, path.join(dir, 'examples/mcp-filesystem'), { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A command line's arguments after `redflow`, quotes removed. */
const argsOf = (command: string): string[] => [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '').slice(1);

/** Starts `redflow <args>` in `dir` and resolves once it says its worker is ready. */
function startWorker(args: readonly string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('worker ready')) resolve(child);
    });
    child.once('exit', (code, signal) => reject(new Error(`redflow ${args.join(' ')} exited (${code ?? signal}) before it was ready: ${stderr}`)));
  });
}

describe('docs/mcp.md, on a cluster', () => {
  let nc: NatsConnection;
  const prefix = uniquePrefix();
  const workers: ChildProcess[] = [];
  beforeAll(async () => {
    nc = await connectTestServer('mcp-doc');
  });
  afterAll(async () => {
    for (const worker of workers) {
      if (worker.exitCode === null) {
        worker.kill('SIGTERM');
        await new Promise((resolve) => worker.once('exit', resolve));
      }
    }
    await removePrefix(nc, prefix);
    await nc.drain();
  });

  it('runs the flow with its MCP server on a tool worker, the core worker learning its tools from it', async () => {
    const [block, ...others] = codeBlocks(section('docs/mcp.md', '### On a cluster'));
    expect(others).toEqual([]);
    const commands = (block?.code ?? '').trim().split('\n').map((line) => [...argsOf(line), '--prefix', prefix]);
    expect(commands.map((args) => args.slice(0, 1))).toEqual([['worker'], ['worker'], ['run']]);
    for (const args of commands.slice(0, 2)) workers.push(await startWorker(args));
    const result = await runCli(commands[2] ?? [], { cwd: dir, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('milk, bread and coffee beans');
  }, 120_000);
});

describe('docs/mcp.md, in Node-RED', () => {
  it('runs an agent wired to the mcp tools node as the page shows it', async () => {
    const [block, ...others] = codeBlocks(section('docs/mcp.md', '### In Node-RED'));
    expect(others).toEqual([]);
    const node = JSON.parse(block?.code ?? '') as NodeRedNodeConfig;
    const { userDir, remove } = await withUserDir();
    try {
      await cp(path.join(EXAMPLE, 'files'), path.join(userDir, 'files'), { recursive: true });
      const answers = JSON.parse(await readFile(path.join(EXAMPLE, 'answers.json'), 'utf8')) as unknown[];
      await loadFlow(userDir, [
        { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 4, allowedTools: ['files'], wires: [['answer'], ['model'], [node.id], []] },
        { id: 'model', type: 'redflow-model', provider: 'scripted', answers, wires: [] },
        node,
        { id: 'answer', type: 'helper' },
      ]);
      const answered = nextMessage('answer', 60_000);
      helper.getNode('agent')?.receive({ payload: 'What is on my shopping list?' });
      expect((await answered).payload).toContain('milk, bread and coffee beans');
    } finally {
      await helper.unload();
      await remove();
    }
  }, 90_000);
});
