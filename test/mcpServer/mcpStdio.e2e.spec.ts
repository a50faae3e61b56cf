import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { BIN, FLOWS, OFFERED, REPO, childEnv, connectStdio, logToTheEnd, traceIdOfProgress } from './mcpHarness.js';

// `redflow mcp` spawned as a desktop client spawns it, driven by the MCP SDK's own Client over
// stdio: flows as tools, each call a run with its own log, progress, cancellation, waits, bad input.

const run = promisify(execFile);
let runsDir: string;
let client: Client;
let stderr: () => string;
let close: () => Promise<void>;

beforeAll(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-stdio-'));
  const connected = await connectStdio(runsDir);
  client = connected.client;
  stderr = connected.stderr;
  close = () => connected.client.close();
});

afterAll(async () => {
  await close?.();
  await rm(runsDir, { recursive: true, force: true });
});

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as { type: string; text: string }[])[0]?.text ?? '';

describe('redflow mcp (stdio)', () => {
  it('should offer each valid flow as a tool named after its id, described by the flow, its input from the trigger', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(OFFERED);
    const ask = tools.find((tool) => tool.name === 'ask');
    expect(ask).toMatchObject({ title: 'Capital finder', description: 'Names the capital of a country.' });
    // No trigger schema: { input: string }, described by the trigger.
    expect(ask?.inputSchema).toEqual({ type: 'object', properties: { input: { type: 'string', description: 'the country' } }, required: ['input'], additionalProperties: false });
    // The trigger's object schema is the tool's.
    expect(tools.find((tool) => tool.name === 'typed')?.inputSchema).toMatchObject({ type: 'object', required: ['city'], properties: { city: { type: 'string' } } });
  });

  it('should leave out, with a coded warning on stderr, a flow that does not validate and ids that make no tool name', () => {
    expect(stderr()).toMatch(/warning NO_MODEL: the flow "broken" is not offered/);
    expect(stderr()).toMatch(/warning MCP_TOOL_NAME_INVALID: the flow "team\/ask" is not offered: .*its tool name team_ask is also the name of "team_ask"/);
    expect(stderr()).toMatch(/warning MCP_TOOL_NAME_INVALID: the flow "team_ask" is not offered/);
    expect(stderr()).toMatch(/warning MCP_TOOL_NAME_INVALID: the flow "a-flow-whose-file-name-is-far-too-long-to-be-a-tool-name-anywhere" is not offered: .*longer than 64/);
  });

  it("should answer a call with the run's answer, name the run in _meta, and leave its log to replay", async () => {
    const result = await client.callTool({ name: 'ask', arguments: { input: 'France' } });
    expect(result.isError).toBe(false);
    expect(textOf(result)).toBe('The capital of France is Paris.');
    const traceId = result._meta?.['redflow/traceId'] as string;
    expect(result._meta).toMatchObject({ 'redflow/status': 'done' });
    const { events } = await readJsonlLog(path.join(runsDir, `${traceId}.jsonl`));
    expect(events[0]).toMatchObject({ type: 'run.started', data: { input: 'France' } });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: { status: 'done', answer: 'The capital of France is Paris.' } } });
  });

  it("should give a flow's validated output as structuredContent, and take the trigger's object schema as the arguments", async () => {
    const result = await client.callTool({ name: 'typed', arguments: { city: 'Lyon' } });
    expect(result).toMatchObject({ isError: false, structuredContent: { summary: 'sunny' } });
    const { events } = await readJsonlLog(path.join(runsDir, `${result._meta?.['redflow/traceId'] as string}.jsonl`));
    expect(events[0]).toMatchObject({ data: { input: { city: 'Lyon' } } });
  });

  it('should carry the tool calls in its progress, and abort the run through the run host when the client cancels', async () => {
    const cancel = new AbortController();
    const progress: string[] = [];
    const call = client.callTool({ name: 'slow', arguments: { input: 'go' } }, undefined, {
      signal: cancel.signal,
      onprogress: ({ message }) => {
        progress.push(message ?? '');
        // Mid-run: the tool is called, and waits until it is aborted.
        if (message === 'turn 1: calling wait') cancel.abort('enough');
      },
    });
    await expect(call).rejects.toThrow(/enough/);
    const traceId = traceIdOfProgress(progress[0]) as string;
    // The activity as it happened, up to the cancellation (the SDK's client drops what comes after:
    // it also handles a notification a moment after a response read with it, so a fast run's last
    // progress may be dropped; a run that is under way gets each one).
    expect(progress).toEqual([`run ${traceId} started`, 'turn 1: asking the model', 'turn 1: Waiting for the tool.', 'turn 1: calling wait']);
    const events = await logToTheEnd(runsDir, traceId);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { outcome: { status: 'blocked', reason: 'aborted', error: { code: 'RUN_ABORTED' } } } });
    expect(JSON.stringify(events.at(-1))).toContain('cancelled by the MCP client');
  });

  it("should answer a run that waits for a person with the question and the command that answers it, which goes on with the run", async () => {
    const result = await client.callTool({ name: 'question', arguments: { input: 'where is my order?' } });
    expect(result.isError).toBe(false);
    const traceId = result._meta?.['redflow/traceId'] as string;
    expect(result._meta).toMatchObject({ 'redflow/status': 'waiting' });
    const log = path.join(runsDir, `${traceId}.jsonl`);
    expect(textOf(result)).toContain(`waits for a person's answer to "Which order do you mean?"`);
    expect(textOf(result)).toContain(`redflow answer ${log} --text <answer>`);
    // The command it names answers it: the run goes on to its answer.
    await run(process.execPath, [BIN, 'answer', log, '--text', 'A-1001'], { cwd: REPO, env: childEnv() });
    const { events } = await readJsonlLog(log);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', data: { outcome: { answer: 'Order A-1001 is on its way.' } } });
  });

  it('should say how to approve a call that waits for approval', async () => {
    const result = await client.callTool({ name: 'approve', arguments: { input: 'refund A-1001' } });
    expect(result.isError).toBe(false);
    expect(textOf(result)).toMatch(/waits for an approval of its call to echo[\s\S]*The call's input: \{"amount":10\}[\s\S]*redflow approve \S+\.jsonl/);
  });

  it("should keep stdout for the protocol when a flow's tool writes to it: the lines go to stderr", async () => {
    const result = await client.callTool({ name: 'noisy', arguments: { input: 'shout' } });
    expect(result).toMatchObject({ isError: false, content: [{ text: 'Shouted.' }] });
    expect(stderr()).toContain('a line a tool logged');
    expect(stderr()).toContain('half a line written to stdout');
  });

  it('should refuse an unknown tool with MCP_TOOL_UNKNOWN, and arguments off the schema with MCP_ARGUMENTS_INVALID before any run', async () => {
    const unknown = await client.callTool({ name: 'nope', arguments: { input: 'x' } }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).message).toContain('MCP_TOOL_UNKNOWN');
    // The logs in the runs folder (a lock file of an earlier answer may come and go meanwhile).
    const logs = async () => (await readdir(runsDir)).filter((name) => name.endsWith('.jsonl'));
    const before = await logs();
    for (const [name, args] of [['ask', { input: 42 }], ['ask', {}], ['ask', { input: 'x', extra: 1 }], ['typed', { city: '' }]] as const) {
      const refused = await client.callTool({ name, arguments: args });
      expect(refused.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(refused)).toMatch(/^MCP_ARGUMENTS_INVALID: the arguments of \w+ do not match its input schema: .+\nhint: /);
    }
    expect(await logs()).toEqual(before);
  });
});

describe('redflow mcp, attacked or cut off', () => {
  it('should refuse an input over the run limits as an error result, with its code, before any run', async () => {
    const refused = await client.callTool({ name: 'ask', arguments: { input: 'x'.repeat(1_000_001) } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^RUN_INPUT_TOO_LARGE: /);
  });

  it('should go on serving after a line on stdin that is not JSON-RPC', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp', '--flows', FLOWS, '--runs', runsDir], { cwd: REPO, env: childEnv() });
    try {
      let stdout = '';
      const answered = new Promise<string>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString('utf8');
          if (stdout.includes('\n')) resolve(stdout);
        });
      });
      child.stdin.write('this is not JSON\n');
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`);
      const [first] = (await answered).split('\n');
      expect(JSON.parse(first ?? '')).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'redflow' } } });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('should abort the runs under way when its client goes away (stdin closed), and exit', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-gone-'));
    const gone = await connectStdio(dir);
    try {
      const exited = new Promise((resolve) => gone.transport.onclose = () => resolve(undefined));
      const progress: string[] = [];
      const call = gone.client.callTool({ name: 'slow', arguments: { input: 'go' } }, undefined, {
        onprogress: ({ message }) => {
          progress.push(message ?? '');
          if (message === 'turn 1: calling wait') void gone.client.close();
        },
      });
      // The server's closing, said as the call's result when it is out before the connection closes.
      expect(await call.then(textOf, (error: Error) => error.message)).toMatch(/^SERVER_CLOSING: |closed/i);
      await exited;
      const events = await logToTheEnd(dir, traceIdOfProgress(progress[0]) as string);
      expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { outcome: { reason: 'aborted' } } });
      expect(gone.stderr()).toContain('redflow mcp: stdin ended: stopping (runs under way are aborted)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('should leave a run its server was killed in the middle of as a log that resume continues, the call failing', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-killed-'));
    const killed = await connectStdio(dir);
    try {
      const progress: string[] = [];
      const call = killed.client.callTool({ name: 'slow', arguments: { input: 'go' } }, undefined, {
        onprogress: ({ message }) => {
          progress.push(message ?? '');
          if (message === 'turn 1: calling wait') process.kill(killed.transport.pid ?? 0, 'SIGKILL');
        },
      });
      await expect(call).rejects.toThrow(/closed/i);
      const log = path.join(dir, `${traceIdOfProgress(progress[0]) as string}.jsonl`);
      const { events } = await readJsonlLog(log);
      expect(events.at(-1)?.type).toBe('tool.requested');
      const replayed = await run(process.execPath, [BIN, 'replay', log], { cwd: REPO, env: childEnv() });
      expect(replayed.stdout).toContain('unfinished: `redflow resume` continues it');
    } finally {
      await killed.client.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('redflow mcp --only', () => {
  it('should offer only the flows named', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-only-'));
    const only = await connectStdio(dir, ['--only', 'ask,typed']);
    try {
      expect((await only.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['ask', 'typed']);
      const outside = await only.client.callTool({ name: 'slow', arguments: { input: 'x' } }).catch((error: unknown) => error);
      expect(String(outside)).toContain('MCP_TOOL_UNKNOWN');
    } finally {
      await only.client.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('should refuse to start on a flow it names that does not validate (65) or is not there (66), with nothing on stdout', async () => {
    const start = (only: string) =>
      run(process.execPath, [BIN, 'mcp', '--flows', FLOWS, '--only', only], { cwd: REPO, env: childEnv() }).then(
        () => ({ code: 0, stdout: '', stderr: '' }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    const broken = await start('ask,broken');
    expect(broken).toMatchObject({ code: 65, stdout: '' });
    expect(broken.stderr).toContain('error NO_MODEL: --only broken:');
    const missing = await start('nowhere');
    expect(missing).toMatchObject({ code: 66, stdout: '' });
    expect(missing.stderr).toContain('error FLOW_NOT_FOUND: --only nowhere: there is no flow "nowhere"');
  });
});
