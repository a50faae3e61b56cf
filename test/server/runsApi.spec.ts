// The runs endpoints of `redflow serve` with the embedded backend: start, get, events, list, abort.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEventsResponse, RunListResponse, RunResponse, RunStartedResponse } from '../../src/server/apiTypes.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { readVerifiedLog } from '../support/cli.js';
import { GATE_TOOL, answer, call, openGate, resetGates, scriptedFlow, startTestServer, tempDirs, waitForRun, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  resetGates();
  t = await startTestServer(dirs);
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

async function saveFlow(id: string, flow: unknown): Promise<void> {
  const saved = await call(t.server, 'PUT', `/api/flows/${id}`, { body: flow });
  expect(saved.status, saved.text).toBeLessThan(300);
}

async function startRun(flow: string, input: unknown = 'hello', extra: Record<string, unknown> = {}): Promise<string> {
  const started = await call(t.server, 'POST', '/api/runs', { body: { flow, input, ...extra } });
  expect(started.status, started.text).toBe(201);
  const body = started.json as RunStartedResponse;
  expect(body.flow).toBe(flow);
  expect(started.headers.location).toBe(`/api/runs/${body.traceId}`);
  return body.traceId;
}

describe('starting a run', () => {
  it('should run a flow of the flows directory and show it finished, with its envelope and log', async () => {
    await saveFlow('team/greeter', scriptedFlow([answer.gate(), answer.final('hi there')]));
    const traceId = await startRun('team/greeter', { text: 'hello' });
    await openGate();
    const run = (await waitForRun(t.server, traceId, (r) => r.status === 'finished')) as unknown as RunResponse;
    expect(run).toMatchObject({
      traceId,
      status: 'finished',
      flow: 'team/greeter',
      iterations: 2,
      lastSeq: 8,
      outcome: { status: 'done', reason: 'final_answer', answer: 'hi there' },
    });
    expect(run.envelope.input).toEqual({ text: 'hello' });
    expect(run.envelope.tools.history.map((call) => call.tool)).toEqual(['gate']);
    // The log is where the CLI keeps it, and the API's events are the log's.
    const { events: logged } = await readVerifiedLog(path.join(t.runsDir, `${traceId}.jsonl`));
    const events = (await call(t.server, 'GET', `/api/runs/${traceId}/events`)).json as RunEventsResponse;
    expect(events.traceId).toBe(traceId);
    expect(events.events).toEqual(logged);
    const after = (await call(t.server, 'GET', `/api/runs/${traceId}/events?after=6`)).json as RunEventsResponse;
    expect(after.events.map((e) => e.seq)).toEqual([7, 8]);
  });

  it('should show a run under way as running', async () => {
    await saveFlow('waits', scriptedFlow([answer.gate(), answer.final('done')]));
    const traceId = await startRun('waits');
    const running = await waitForRun(t.server, traceId, (r) => r.lastSeq >= 4);
    expect(running.status).toBe('running');
    expect(running.outcome).toBeUndefined();
    await openGate();
    await waitForRun(t.server, traceId, (r) => r.status === 'finished');
  });

  it('should end a run whose model answers invalid JSON as blocked with INVALID_JSON', async () => {
    await saveFlow('broken-model', scriptedFlow(['{"action": "final", "message": "oops"']));
    const traceId = await startRun('broken-model');
    const run = await waitForRun(t.server, traceId, (r) => r.status === 'finished');
    expect(run.outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: 'INVALID_JSON' } });
  });

  it('should answer 404 for an unknown flow and 400 with the diagnostics for an invalid one', async () => {
    const unknown = await call(t.server, 'POST', '/api/runs', { body: { flow: 'nope', input: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.error?.code).toBe('FLOW_NOT_FOUND');

    await saveFlow('invalid', { ...scriptedFlow([answer.final('x')]), edges: [] });
    const invalid = await call(t.server, 'POST', '/api/runs', { body: { flow: 'invalid', input: 'x' } });
    expect(invalid.status).toBe(400);
    expect(invalid.error?.message).toContain('invalid is not a valid flow');
    const diagnostics = (invalid.json as { diagnostics: { code: string; severity: string }[] }).diagnostics;
    expect(diagnostics.map((d) => d.code)).toContain('CAPABILITY_NOT_CONNECTED');
  });

  it('should answer 400 RUN_INPUT_INVALID for an input the trigger does not take', async () => {
    await saveFlow('typed', scriptedFlow([answer.final('x')], { inputSchema: { type: 'object', required: ['orderId'] } }));
    const refused = await call(t.server, 'POST', '/api/runs', { body: { flow: 'typed', input: 'just text' } });
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe('RUN_INPUT_INVALID');
    expect(await call(t.server, 'GET', '/api/runs').then((a) => (a.json as RunListResponse).runs)).toEqual([]);
  });

  it('should answer 400 TOOL_MODULE_INVALID for a tool module that is not there (paths are relative to the flow file)', async () => {
    const flow = scriptedFlow([answer.final('x')]);
    const missing = { ...flow, nodes: flow.nodes.map((n) => (n.id === 'gate' ? { ...n, config: { module: './tools/missing.mjs' } } : n)) };
    await saveFlow('team/missing-tool', missing);
    const refused = await call(t.server, 'POST', '/api/runs', { body: { flow: 'team/missing-tool', input: 'x' } });
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe('TOOL_MODULE_INVALID');
    // Named as the flow wrote it: the server's own paths stay on the server.
    expect(refused.error?.message).toContain('"./tools/missing.mjs"');
    expect(refused.text).not.toContain(t.root);
  });

  it('should end a run as timeout after timeoutMs', async () => {
    await saveFlow('slow', scriptedFlow([answer.gate(), answer.final('late')]));
    const traceId = await startRun('slow', 'x', { timeoutMs: 100 });
    const run = await waitForRun(t.server, traceId, (r) => r.status === 'finished');
    expect(run.outcome).toMatchObject({ status: 'blocked', reason: 'timeout' });
  });
});

describe('unknown runs', () => {
  it('should answer 404 RUN_NOT_FOUND for an unknown or malformed trace id on every run route', async () => {
    for (const id of ['no-such-run', 'bad%2Fid', 'bad.id', '..', 'x'.repeat(200)]) {
      for (const [method, suffix] of [['GET', ''], ['GET', '/events'], ['GET', '/stream'], ['POST', '/abort']] as const) {
        const answered = await call(t.server, method, `/api/runs/${id}${suffix}`);
        expect(answered.status, `${method} ${id}${suffix}`).toBe(404);
        expect(answered.error?.code).toBe('RUN_NOT_FOUND');
      }
    }
  });

  it('should refuse a bad ?after= or ?limit= with 400 HTTP_QUERY_INVALID', async () => {
    for (const target of ['/api/runs?limit=0', '/api/runs?limit=abc', '/api/runs?limit=5000', '/api/runs/x/events?after=-1', '/api/runs/x/stream?after=1.5']) {
      const answered = await call(t.server, 'GET', target);
      expect(answered.status, target).toBe(400);
      expect(answered.error?.code).toBe('HTTP_QUERY_INVALID');
    }
  });
});

describe('aborting a run', () => {
  it('should abort a running run with 202, record the reason, and answer 409 once it has ended', async () => {
    await saveFlow('waits', scriptedFlow([answer.gate(), answer.final('never')]));
    const traceId = await startRun('waits');
    await waitForRun(t.server, traceId, (r) => r.lastSeq >= 4);
    const aborted = await call(t.server, 'POST', `/api/runs/${traceId}/abort`, { body: { reason: 'changed my mind' } });
    expect(aborted.status, aborted.text).toBe(202);
    expect((aborted.json as RunResponse).traceId).toBe(traceId);
    const run = await waitForRun(t.server, traceId, (r) => r.status === 'finished');
    expect(run.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
    expect(JSON.stringify(run.outcome)).toContain('changed my mind');

    const again = await call(t.server, 'POST', `/api/runs/${traceId}/abort`);
    expect(again.status).toBe(409);
    expect(again.error?.code).toBe('RUN_ALREADY_FINISHED');
  });

  it('should abort the runs under way when the server closes, and record it in their logs', async () => {
    await saveFlow('waits', scriptedFlow([answer.gate(), answer.final('never')]));
    const traceId = await startRun('waits');
    await waitForRun(t.server, traceId, (r) => r.lastSeq >= 4);
    await t.close();
    const { events } = await readVerifiedLog(path.join(t.runsDir, `${traceId}.jsonl`));
    expect(events.at(-1)?.data.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
    // Closing twice is harmless (afterEach closes again).
    await t.close();
  });
});

describe('listing runs', () => {
  it('should list runs newest first, with a flow filter and a limit, including runs of the CLI and interrupted ones', async () => {
    await saveFlow('a', scriptedFlow([answer.final('a')]));
    await saveFlow('folder/b', scriptedFlow([answer.final('b')]));
    const first = await startRun('a');
    await waitForRun(t.server, first, (r) => r.status === 'finished');
    const second = await startRun('folder/b');
    await waitForRun(t.server, second, (r) => r.status === 'finished');

    // A run made by the CLI (`redflow run flows/a.json`) into the same runs directory.
    const allowFiles = [path.dirname(GATE_TOOL)];
    const cli = await runFlowFile({ flowPath: path.join(t.flowsDir, 'a.json'), input: 'from the cli', logPath: path.join(t.runsDir, 'cli-run.jsonl'), traceId: 'cli-run', env: {}, allowFiles });
    await cli.finished();
    // A run whose process died: its log stops early.
    const crashed = await runFlowFile({ flowPath: path.join(t.flowsDir, 'folder', 'b.json'), input: 'x', logPath: path.join(t.runsDir, 'crashed.jsonl'), traceId: 'crashed', env: {}, allowFiles });
    await crashed.finished();
    const log = await readFile(path.join(t.runsDir, 'crashed.jsonl'), 'utf8');
    await writeFile(path.join(t.runsDir, 'crashed.jsonl'), log.split('\n').slice(0, 2).join('\n') + '\n');
    // Something else in the directory is ignored.
    await writeFile(path.join(t.runsDir, 'notes.txt'), 'x');
    await writeFile(path.join(t.runsDir, 'empty.jsonl'), '');

    const all = (await call(t.server, 'GET', '/api/runs')).json as RunListResponse;
    expect(all.runs.map((r) => [r.traceId, r.status, r.flow])).toEqual([
      ['crashed', 'interrupted', 'folder/b'],
      ['cli-run', 'finished', 'a'],
      [second, 'finished', 'folder/b'],
      [first, 'finished', 'a'],
    ]);
    expect(all.runs[0]).not.toHaveProperty('envelope');
    expect(all.runs[1]).toMatchObject({ iterations: 1, lastSeq: 4, outcome: { status: 'done', answer: 'a' } });

    const onlyA = (await call(t.server, 'GET', '/api/runs?flow=a')).json as RunListResponse;
    expect(onlyA.runs.map((r) => r.traceId)).toEqual(['cli-run', first]);
    const limited = (await call(t.server, 'GET', '/api/runs?limit=2')).json as RunListResponse;
    expect(limited.runs.map((r) => r.traceId)).toEqual(['crashed', 'cli-run']);

    const interrupted = await call(t.server, 'GET', '/api/runs/crashed');
    expect(interrupted.json).toMatchObject({ status: 'interrupted', lastSeq: 2 });
    const abort = await call(t.server, 'POST', '/api/runs/crashed/abort');
    expect(abort.status).toBe(409);
    expect(abort.error?.hint).toContain('redflow resume');
  });
});
