import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { encodeJsonlLog } from '../../src/events/jsonlEventStore.js';
import { resumeFromLog, runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { loadValidFlow } from '../../src/flows/loadValidFlow.js';
import { allowedToolSpecs } from '../../src/runtime/buildTools.js';
import { planRun } from '../../src/runtime/runPlan.js';
import { FAULTY, dataOf, final, runMcpFlow, tool, writeMcpFlow } from '../support/mcpFlows.js';

/**
 * tool.mcp when things go wrong: a server that cannot start, one that crashes, hangs, fails or
 * answers too much during a call, one that lists a tool Redflow cannot offer; and a run resumed
 * after its process died in a call.
 */

let dir: string;
let counts: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-mcp-faults-'));
  counts = path.join(dir, 'counts.txt');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const faulty = (more: Record<string, unknown> = {}) => ({ ...FAULTY, env: { COUNT_FILE: counts }, ...more });

async function expectRefused(flowPath: string, traceId: string): Promise<{ code: unknown; message: string; hint?: string }> {
  const error: unknown = await runFlowFile({ flowPath, input: 'go', traceId, logPath: path.join(dir, 'runs', `${traceId}.jsonl`), fsync: 'never' }).then(
    () => new Error('the run started'),
    (refusal: unknown) => refusal,
  );
  // Refused before the run started: no log was written.
  await expect(access(path.join(dir, 'runs', `${traceId}.jsonl`))).rejects.toThrow();
  return error as { code: unknown; message: string; hint?: string };
}

describe('an MCP server that cannot be used', () => {
  it('stops the run before it starts when the command does not exist: MCP_SERVER_UNAVAILABLE naming the server', async () => {
    const flowPath = await writeMcpFlow(dir, 'missing', { command: 'redflow-no-such-mcp-server' }, [final('never')]);
    const error = await expectRefused(flowPath, 'missing');
    expect(error).toMatchObject({ code: ErrorCode.MCP_SERVER_UNAVAILABLE, message: expect.stringContaining("MCP server 'mcp'") });
    expect(error.message).toContain('redflow-no-such-mcp-server');
    expect(error.hint).toContain('PATH');
  });

  it('names the environment variable a header needs when it is not set', async () => {
    const flowPath = await writeMcpFlow(dir, 'nokey', { url: 'http://127.0.0.1:9/mcp', headersFromEnv: { Authorization: 'REDFLOW_TEST_UNSET_TOKEN' } }, [final('never')]);
    const error = await expectRefused(flowPath, 'nokey');
    expect(error).toMatchObject({ code: ErrorCode.MCP_SERVER_UNAVAILABLE, message: expect.stringContaining('REDFLOW_TEST_UNSET_TOKEN') });
  });

  it('refuses a tool whose input schema is not valid JSON Schema, naming the tool: MCP_TOOL_SCHEMA_INVALID', async () => {
    const flowPath = await writeMcpFlow(dir, 'schema', { ...FAULTY, args: [...FAULTY.args, 'bad-schema'] }, [final('never')]);
    const error = await expectRefused(flowPath, 'schema');
    expect(error).toMatchObject({ code: ErrorCode.MCP_TOOL_SCHEMA_INVALID, message: expect.stringContaining("tool 'broken'") });
    expect(error.hint).toContain('exclude');
  });

  it('refuses a tool whose name the model could not call (MCP_TOOL_NAME_INVALID), and one named like another tool (DUPLICATE_TOOL_NAME)', async () => {
    const dotted = await writeMcpFlow(dir, 'name', { ...FAULTY, args: [...FAULTY.args, 'bad-name'] }, [final('never')]);
    expect(await expectRefused(dotted, 'name')).toMatchObject({ code: ErrorCode.MCP_TOOL_NAME_INVALID, message: expect.stringContaining("'files.read'") });
    const clash = await writeMcpFlow(dir, 'clash', faulty({ include: ['count'] }), [final('never')], {}, [{ id: 'count', type: 'tool.client', config: { inputSchema: { type: 'object' } } }]);
    const error = await expectRefused(clash, 'clash');
    expect(error).toMatchObject({ code: ErrorCode.DUPLICATE_TOOL_NAME, message: expect.stringContaining("'count'") });
    expect(error.hint).toContain('prefix');
  });

  it("refuses where its tools cannot be offered yet (a cluster's core worker asks for specs only): TOOL_CONFIG_INVALID naming it", async () => {
    const flowPath = await writeMcpFlow(dir, 'cluster', faulty(), [final('never')]);
    const loaded = await loadValidFlow(flowPath);
    const error: unknown = await allowedToolSpecs(planRun(loaded.flow, loaded.baseDir)).then(() => new Error('specs given'), (refusal: unknown) => refusal);
    expect(error).toMatchObject({ code: ErrorCode.TOOL_CONFIG_INVALID, message: expect.stringContaining("MCP server 'mcp'") });
  });

  it('refuses an include entry the server does not list: MCP_TOOL_NOT_FOUND', async () => {
    const flowPath = await writeMcpFlow(dir, 'include', faulty({ include: ['count', 'nope'] }), [final('never')]);
    expect(await expectRefused(flowPath, 'include')).toMatchObject({ code: ErrorCode.MCP_TOOL_NOT_FOUND, message: expect.stringContaining("'nope'") });
  });
});

describe('a call that goes wrong is a tool error the model sees, and the run goes on', () => {
  it('isError, a server crashing mid-call (restarted at the next call), a hang past timeoutMs, 10 MB of result', async () => {
    const flowPath = await writeMcpFlow(
      dir,
      'faults',
      faulty(),
      [tool('fail', {}), tool('count', {}), tool('crash', {}), tool('count', {}), tool('slow_hang', {}), tool('big', { megabytes: 10 }), tool('big', { megabytes: 2 }), tool('count', {}), final('survived')],
      { maxIterations: 10 },
      // A second server of the same program, its tools prefixed, with a short time limit.
      [{ id: 'slow', type: 'tool.mcp', config: faulty({ prefix: 'slow_', include: ['hang'], timeoutMs: 800 }) }],
    );
    const { result, events } = await runMcpFlow(dir, flowPath, 'faults');
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'survived' });
    const results = dataOf(events, 'tool.completed').map((completed) => (completed.ok ? completed.output : completed.error));
    expect(results[0]).toMatchObject({ code: ErrorCode.TOOL_FAILED, message: expect.stringContaining('the disk is on fire') });
    expect(results[2]).toMatchObject({ code: ErrorCode.TOOL_FAILED, message: expect.stringContaining('closed the connection') });
    // The crashed server was started again for the next call: another process answered it.
    expect(results[1]).not.toEqual(results[3]);
    expect(results[3]).toMatch(/^pid \d+$/);
    expect(results[4]).toMatchObject({ code: ErrorCode.TOOL_TIMEOUT, message: expect.stringContaining('800 ms') });
    // 10 MB is past what is read from the server, 2 MB past what the node keeps (1 MiB): both coded.
    expect(results[5]).toMatchObject({ code: ErrorCode.TOOL_RESPONSE_TOO_LARGE });
    expect(results[6]).toMatchObject({ code: ErrorCode.TOOL_RESPONSE_TOO_LARGE, message: expect.stringContaining('1048576') });
    expect(results[7]).toMatch(/^pid \d+$/);
  });

  it('cancels the call on the server when the run is aborted', async () => {
    const notes = path.join(dir, 'hang-notes.txt');
    const flowPath = await writeMcpFlow(dir, 'abort', faulty({ env: { COUNT_FILE: notes } }), [tool('hang', {})]);
    const controller = new AbortController();
    const started = await runFlowFile({ flowPath, input: 'go', traceId: 'abort', logPath: path.join(dir, 'runs', 'abort.jsonl'), fsync: 'never', signal: controller.signal });
    // The server is in the call (it says so in its notes file): abort the run.
    await vi.waitFor(async () => expect(await readFile(notes, 'utf8')).toMatch(/^started \d+\n$/), { timeout: 10_000 });
    controller.abort('enough');
    expect((await started.finished()).outcome).toMatchObject({ status: 'blocked' });
    // The server got notifications/cancelled for the call before the connection was closed.
    expect(await readFile(notes, 'utf8')).toMatch(/^started (\d+)\ncancelled \1\n$/);
  });
});

describe('resume after the process died in a call', () => {
  it('sends the logged call again with the same idempotency key, and goes on', async () => {
    const flowPath = await writeMcpFlow(dir, 'resume', faulty({ include: ['count'] }), [tool('count', { note: 'a' }), tool('count', { note: 'b' }), final('counted')]);
    const first = await runMcpFlow(dir, flowPath, 'resume');
    expect(first.result.outcome).toMatchObject({ status: 'done' });
    // As if killed right after the second call was logged, before its result was.
    const cut = first.events.findIndex((event) => event.type === 'tool.requested' && event.iteration === 2) + 1;
    const logPath = path.join(dir, 'runs', 'resumed.jsonl');
    await writeFile(logPath, encodeJsonlLog(first.events.slice(0, cut).map((event) => ({ ...event, traceId: 'resumed' }))));
    await writeFile(counts, '');
    const resumed = await resumeFromLog({ logPath, fsync: 'never' });
    expect((await resumed.finished()).outcome).toMatchObject({ status: 'done', answer: 'counted' });
    const calls = (await readFile(counts, 'utf8')).trim().split('\n');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toContain('"redflow/idempotencyKey":"resume:2"');
  });
});
