import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, FLOWS, OFFERED, REPO, childEnv, inspector, logToTheEnd, traceIdOfProgress } from './mcpHarness.js';

// `redflow serve --mcp`: the same tools over Streamable HTTP at /mcp, behind the API's token,
// driven by the MCP SDK's own Client and its Streamable HTTP transport.

const TOKEN = 'mcp-test-token-5f2c';
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Served {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  readonly mcp: URL;
  readonly exited: Promise<number | null>;
  readonly stderr: () => string;
}

/** `redflow serve --port 0 …` in the repository: its URL and MCP URL once it prints them. */
async function startServe(args: readonly string[]): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--flows', FLOWS, ...args], { cwd: REPO, env: childEnv() });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const found = /redflow serve: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout);
      if (found?.[1] !== undefined) resolve(found[1]);
    });
    void exited.then((code) => reject(new Error(`serve exited (${code}):\n${stdout}\n${stderr}`)));
  });
  return { child, url, mcp: new URL('/mcp', url), exited, stderr: () => stderr };
}

async function connect(served: Served, token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'redflow-test', version: '1.0.0' });
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(served.mcp, { requestInit: { headers } }));
  return client;
}

let runsDir: string;
let served: Served;
let client: Client;

beforeAll(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-http-'));
  served = await startServe(['--runs', runsDir, '--token', TOKEN, '--mcp']);
  client = await connect(served, TOKEN);
});

afterAll(async () => {
  await client?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  await rm(runsDir, { recursive: true, force: true });
});

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { type: string; text: string }[])[0]?.text ?? '';

describe('redflow serve --mcp (Streamable HTTP)', () => {
  it('should refuse a client without the token, or with a wrong one, with 401 before any MCP', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token']) {
      const answer = await fetch(served.mcp, { method: 'POST', headers: { ...MCP_HEADERS, ...(authorization !== undefined && { authorization }) }, body: JSON.stringify(INITIALIZE) });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain('Bearer');
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('HTTP_UNAUTHORIZED');
    }
    await expect(connect(served, undefined)).rejects.toThrow();
  });

  it('should list the flows as tools and answer a call with its run', async () => {
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(OFFERED);
    const result = await client.callTool({ name: 'ask', arguments: { input: 'France' } });
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'The capital of France is Paris.' }] });
    const traceId = result._meta?.['redflow/traceId'] as string;
    // A run like any of the server's: the API lists it.
    const run = await fetch(new URL(`/api/runs/${traceId}`, served.url), { headers: { authorization: `Bearer ${TOKEN}` } });
    // (What the API says of it may lag its log a moment, while the run lets go of it.)
    expect(await run.json()).toMatchObject({ traceId, flow: 'ask' });
  });

  it("should send the run's progress, and abort the run when the client cancels the call mid-run", async () => {
    const cancel = new AbortController();
    const progress: string[] = [];
    const call = client.callTool({ name: 'slow', arguments: { input: 'go' } }, undefined, {
      signal: cancel.signal,
      onprogress: ({ message }) => {
        progress.push(message ?? '');
        if (message === 'turn 1: calling wait') cancel.abort('enough');
      },
    });
    await expect(call).rejects.toThrow(/enough/);
    const traceId = traceIdOfProgress(progress[0]) as string;
    expect(progress).toEqual([`run ${traceId} started`, 'turn 1: asking the model', 'turn 1: Waiting for the tool.', 'turn 1: calling wait']);
    const events = await logToTheEnd(runsDir, traceId);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { outcome: { reason: 'aborted' } } });
  });

  it('should answer a call that waits for approval with the API route that approves it, which runs it on', async () => {
    const result = await client.callTool({ name: 'approve', arguments: { input: 'refund A-1001' } });
    expect(result.isError).toBe(false);
    const traceId = result._meta?.['redflow/traceId'] as string;
    expect(textOf(result)).toContain(`POST /api/runs/${traceId}/approval with {"decision":"approve"}`);
    expect(textOf(result)).toContain(`redflow approve ${traceId} --server ${served.url}`);
    const approved = await fetch(new URL(`/api/runs/${traceId}/approval`, served.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(approved.status).toBe(202);
    const events = await logToTheEnd(runsDir, traceId);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: { answer: 'Refunded 10.' } } });
  });

  it('should serve the MCP Inspector CLI, as an independent client, with the token as a header', async () => {
    const listed = (await inspector([served.mcp.href, '--transport', 'http', '--header', `Authorization: Bearer ${TOKEN}`, '--method', 'tools/list'])) as { tools: { name: string }[] };
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual(OFFERED);
  });

  it('should answer 404 to a session it does not know, so that the client starts a new one', async () => {
    const answer = await fetch(served.mcp, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}`, 'mcp-session-id': 'made-up' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(answer.status).toBe(404);
  });
});

describe('redflow serve --mcp, on its log', () => {
  it('should warn once of each flow it leaves out, however many clients list the tools', async () => {
    const second = await connect(served, TOKEN);
    await second.listTools();
    await second.close();
    expect(served.stderr().match(/warning NO_MODEL: MCP: the flow "broken" is not offered/g)).toHaveLength(1);
  });
});

describe('redflow serve without --mcp', () => {
  it('should serve no MCP at /mcp', async () => {
    const plain = await startServe(['--runs', runsDir]);
    try {
      const answer = await fetch(plain.mcp, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
      expect(answer.headers.get('mcp-session-id')).toBeNull();
      expect(answer.status).not.toBe(200);
    } finally {
      plain.child.kill('SIGTERM');
      await plain.exited;
    }
  });
});
