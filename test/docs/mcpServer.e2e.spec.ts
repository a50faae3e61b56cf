import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { BIN, REPO, childEnv } from '../mcpServer/mcpHarness.js';
import { codeBlocks, readPage } from './docPages.js';

// docs/mcp-server.md as written: its setup commands run in a fresh folder, its desktop client
// config starts the server the SDK's stdio client talks to (the call's result is the one shown),
// its serve command runs, and its Streamable HTTP config reaches that server.

const run = promisify(execFile);
const blocks = codeBlocks(readPage('docs/mcp-server.md'));
const one = (lang: string, has: string) => {
  const found = blocks.filter((block) => block.lang === lang && block.code.includes(has));
  expect(found, `one ${lang} block with ${has}`).toHaveLength(1);
  return found[0]?.code ?? '';
};
/** The page's `redflow …` commands, run as this checkout's `node bin/redflow.js …`. */
const local = (command: string) => command.replace(/^(npx )?redflow /, `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} `);

interface McpServersConfig {
  readonly mcpServers: Record<string, { command?: string; args?: string[]; type?: string; url?: string; headers?: Record<string, string> }>;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-doc-mcp-'));
  // The page's commands run in a checkout: its examples are there.
  await symlink(path.join(REPO, 'examples'), path.join(dir, 'examples'));
  await run('sh', ['-e', '-c', one('sh', 'mkdir -p agents')], { cwd: dir });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the MCP server page (docs/mcp-server.md)', () => {
  it("should start from its desktop client config, offer order-status, and answer the call with the result shown", async () => {
    const config = JSON.parse(one('json', '"command"')) as McpServersConfig;
    const server = config.mcpServers.redflow;
    expect(server?.command).toBe('npx');
    const [name, ...args] = (server?.args ?? []).map((arg) => arg.replace('/home/me/agents', path.join(dir, 'agents')));
    expect(name).toBe('redflow');
    const client = new Client({ name: 'doc-test', version: '1.0.0' });
    // The client's own folder is not the agents': the config's absolute paths are what count.
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, ...args], env: childEnv(), cwd: tmpdir(), stderr: 'ignore' }));
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['order-status']);
      const result = await client.callTool({ name: 'order-status', arguments: { input: 'Where is order A-1001?' } });
      const shown = JSON.parse(one('json', '"content"')) as { content: unknown; isError: boolean; _meta: Record<string, string> };
      expect(result.content).toEqual(shown.content);
      expect(result.isError).toBe(shown.isError);
      expect(Object.keys(result._meta ?? {}).sort()).toEqual(Object.keys(shown._meta).sort());
      expect(result._meta?.['redflow/status']).toBe(shown._meta['redflow/status']);
      const { events } = await readJsonlLog(path.join(dir, 'agents', 'runs', `${result._meta?.['redflow/traceId'] as string}.jsonl`));
      expect(events.at(-1)?.type).toBe('run.completed');
    } finally {
      await client.close();
    }
  });

  it('should serve the same tool over Streamable HTTP with its serve command, reached with its HTTP config', async () => {
    const token = 'doc-token-81c3';
    const command = one('sh', '--mcp').trim();
    const child = spawn('sh', ['-c', `exec ${local(command)} --port 0`], { cwd: dir, env: { ...childEnv(), REDFLOW_TOKEN: token } });
    const exited = new Promise((resolve) => child.once('close', resolve));
    try {
      let stdout = '';
      const mcpUrl = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString('utf8');
          const found = /MCP \(Streamable HTTP\): (http:\/\/\S+\/mcp)/.exec(stdout);
          if (found?.[1] !== undefined) resolve(found[1]);
        });
        void exited.then(() => reject(new Error(`serve exited: ${stdout}`)));
      });
      const config = (JSON.parse(one('json', '"url"')) as McpServersConfig).mcpServers.redflow;
      expect(config?.type).toBe('http');
      const url = new URL((config?.url ?? '').replace('http://127.0.0.1:4800/mcp', mcpUrl));
      const headers = Object.fromEntries(Object.entries(config?.headers ?? {}).map(([key, value]) => [key, value.replace('<token>', token)]));
      const client = new Client({ name: 'doc-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['order-status']);
      await client.close();
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
