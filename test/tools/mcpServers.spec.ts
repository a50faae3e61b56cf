import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { EVERYTHING_STDIO, ROOT, dataOf, final, runMcpFlow, startEverythingHttp, tool, writeMcpFlow } from '../support/mcpFlows.js';

/**
 * tool.mcp against real MCP servers from npm: server-everything over stdio and over Streamable
 * HTTP, server-filesystem over stdio, in flows run with the scripted model.
 */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(flowPath: string, traceId: string, env?: NodeJS.ProcessEnv) {
  const ran = await runMcpFlow(dir, flowPath, traceId, env ? { env } : {});
  expect(ran.problems).toEqual([]);
  return ran;
}

describe('an MCP server over stdio (server-everything)', () => {
  it("makes the server's tools the agent's, with their descriptions and schemas, and records each call and its result", async () => {
    const flowPath = await writeMcpFlow(
      dir,
      'everything',
      { ...EVERYTHING_STDIO, include: ['echo', 'get-sum', 'get-tiny-image', 'get-structured-content', 'get-resource-links'] },
      [
        tool('echo', { message: 'hello' }),
        tool('get-sum', { a: 2, b: 40 }),
        tool('get-tiny-image', {}),
        tool('get-structured-content', { location: 'Chicago' }),
        tool('get-resource-links', { count: 1 }),
        final('done'),
      ],
    );
    const { result, events } = await run(flowPath, 'everything');
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'done' });
    const [started] = dataOf(events, 'run.started');
    // The node's name stands for the tools it brought: the run records them one by one.
    expect(started?.agent.allowedTools).toEqual(['echo', 'get-resource-links', 'get-structured-content', 'get-sum', 'get-tiny-image'].sort((a, b) => order(a) - order(b)));
    const echoSpec = started?.tools.find((spec) => spec.name === 'echo');
    expect(echoSpec).toMatchObject({ description: expect.stringContaining('Echo'), inputSchema: { type: 'object', properties: { message: { type: 'string' } } } });
    const outputs = dataOf(events, 'tool.completed').map((completed) => (completed.ok ? completed.output : completed.error));
    expect(outputs[0]).toBe('Echo: hello');
    expect(outputs[1]).toEqual(expect.stringContaining('42'));
    // An image is described (type, MIME type, size), not dropped and not copied into the log.
    expect(outputs[2]).toMatchObject({ parts: [{ type: 'image', mimeType: 'image/png', bytes: expect.any(Number) }] });
    // Structured content is the observation (its text copy for older clients is not repeated).
    expect(outputs[3]).toEqual({ temperature: expect.any(Number), conditions: expect.any(String), humidity: expect.any(Number) });
    expect(outputs[4]).toMatchObject({ parts: [{ type: 'resource_link', uri: expect.stringMatching(/^demo:\/\//) }] });
    // Each call was logged before it ran, with the key a re-sent call would carry.
    expect(dataOf(events, 'tool.requested').map((requested) => requested.idempotencyKey)).toEqual(['everything:1', 'everything:2', 'everything:3', 'everything:4', 'everything:5']);
  });
});

/** The order server-everything lists its tools in (echo first): the run keeps the server's order. */
function order(name: string): number {
  return ['echo', 'get-resource-links', 'get-structured-content', 'get-sum', 'get-tiny-image'].indexOf(name);
}

describe('an MCP server over Streamable HTTP (server-everything)', () => {
  it('calls its tools under the prefix, sends the header from the environment, and a finished run replays with the server gone', async () => {
    const server = await startEverythingHttp();
    let logPath: string;
    try {
      const flowPath = await writeMcpFlow(
        dir,
        'http',
        { url: server.url, headersFromEnv: { 'X-Api-Key': 'EVERYTHING_KEY' }, prefix: 'ev_', include: ['echo'] },
        [tool('ev_echo', { message: 'over http' }), final('echoed')],
      );
      const ran = await run(flowPath, 'http', { ...process.env, EVERYTHING_KEY: 'key-4242-secret' });
      logPath = ran.logPath;
      expect(ran.result.outcome).toMatchObject({ status: 'done', answer: 'echoed' });
      expect(dataOf(ran.events, 'tool.completed')[0]).toMatchObject({ ok: true, output: 'Echo: over http' });
      expect(dataOf(ran.events, 'run.started')[0]?.agent.allowedTools).toEqual(['ev_echo']);
      expect(await readFile(logPath, 'utf8')).not.toContain('key-4242-secret');
    } finally {
      await server.stop();
    }
    // The log holds every result: replaying it needs no server.
    const replayed = await runCli(['replay', logPath], { cwd: dir });
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain('ev_echo');
    expect(replayed.stdout).toContain('echoed');
  });
});

describe('server-filesystem over stdio on a temporary folder', () => {
  it('lists and reads the files of the folder it was given', async () => {
    const files = await mkdtemp(path.join(dir, 'files-'));
    await writeFile(path.join(files, 'notes.txt'), 'buy milk');
    const server = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
    const flowPath = await writeMcpFlow(
      dir,
      'filesystem',
      { command: process.execPath, args: [server, files], prefix: 'fs_', include: ['list_directory', 'read_text_file'] },
      [tool('fs_list_directory', { path: files }), tool('fs_read_text_file', { path: path.join(files, 'notes.txt') }), final('milk')],
    );
    const { result, events } = await run(flowPath, 'filesystem');
    expect(result.outcome).toMatchObject({ status: 'done' });
    const completed = dataOf(events, 'tool.completed');
    expect(completed[0]).toMatchObject({ ok: true, output: { content: '[FILE] notes.txt' } });
    expect(completed[1]).toMatchObject({ ok: true, output: { content: 'buy milk' } });
  });
});
