// Forking a run and comparing two runs through `redflow serve`: POST /api/runs/:traceId/fork and GET /api/runs/:a/diff/:b.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunDiff, RunForkedResponse, RunListResponse, RunResponse, RunStartedResponse } from '../../src/server/apiTypes.js';
import { answer, call, openGate, resetGates, scriptedFlow, startTestServer, tempDirs, waitForRun, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  resetGates();
  t = await startTestServer(dirs);
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

/** A finished run of a flow whose model calls the gate twice and then answers: three iterations. */
async function finishedRun(flowId = 'forkable', input: unknown = 'hello'): Promise<string> {
  expect((await call(t.server, 'PUT', `/api/flows/${flowId}`, { body: scriptedFlow([answer.gate(), answer.gate(), answer.final('parent done')]) })).status).toBeLessThan(300);
  const started = await call(t.server, 'POST', '/api/runs', { body: { flow: flowId, input } });
  expect(started.status, started.text).toBe(201);
  const { traceId } = started.json as RunStartedResponse;
  await openGate();
  await openGate();
  await waitForRun(t.server, traceId, (run) => run.status === 'finished');
  return traceId;
}

describe('forking a run through the API', () => {
  it('should start a fork that replays the parent up to the iteration, shows its lineage, is listed, and diffs from that iteration', async () => {
    const parent = await finishedRun();
    const forked = await call(t.server, 'POST', `/api/runs/${parent}/fork`, { body: { at: 2, answers: { 2: answer.final('forked answer') } } });
    expect(forked.status, forked.text).toBe(201);
    const { traceId } = forked.json as RunForkedResponse;
    expect(traceId).not.toBe(parent);
    expect(forked.headers.location).toBe(`/api/runs/${traceId}`);

    const run = (await waitForRun(t.server, traceId, (r) => r.status === 'finished')) as unknown as RunResponse;
    expect(run).toMatchObject({ flow: 'forkable', iterations: 2, outcome: { status: 'done', answer: 'forked answer' } });
    expect(run.envelope.lineage?.parent.traceId).toBe(parent);
    const events = (await call(t.server, 'GET', `/api/runs/${traceId}/events`)).json as { events: { type: string; data: { atIteration?: number } }[] };
    expect(events.events[1]).toMatchObject({ type: 'run.forked', data: { atIteration: 2 } });

    const list = (await call(t.server, 'GET', '/api/runs')).json as RunListResponse;
    expect(list.runs.map((r) => r.traceId)).toEqual(expect.arrayContaining([parent, traceId]));

    const diff = await call(t.server, 'GET', `/api/runs/${parent}/diff/${traceId}`);
    expect(diff.status, diff.text).toBe(200);
    const body = diff.json as RunDiff;
    expect(body.same).toBe(false);
    expect(body.first).toMatchObject({ iteration: 2, field: 'decision' });
    expect(body.iterations.map((it) => [it.iteration, it.differences.length > 0])).toEqual([
      [1, false],
      [2, true],
      [3, true],
    ]);
    expect(body.runs.a.traceId).toBe(parent);
    expect(body.runs.b.traceId).toBe(traceId);
  });

  it('should show a fork under way with the prefix it copied from its parent, before its own events', async () => {
    const parent = await finishedRun('gated');
    // Iteration 2 calls the gate again, live: the fork waits there until the test opens it.
    const { traceId } = (await call(t.server, 'POST', `/api/runs/${parent}/fork`, { body: { at: 2 } })).json as RunForkedResponse;
    const running = (await waitForRun(t.server, traceId, (r) => r.status === 'running' && r.lastSeq > 7)) as unknown as RunResponse;
    expect(running.envelope.lineage?.parent.traceId).toBe(parent);
    const events = ((await call(t.server, 'GET', `/api/runs/${traceId}/events`)).json as { events: { seq: number; type: string }[] }).events;
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.slice(0, 2).map((event) => event.type)).toEqual(['run.started', 'run.forked']);
    // A fork under way is itself still running.
    const busy = await call(t.server, 'POST', `/api/runs/${traceId}/fork`, { body: { at: 1 } });
    expect(busy.error?.code).toBe('FORK_RUN_STILL_RUNNING');
    await openGate();
    const done = (await waitForRun(t.server, traceId, (r) => r.status === 'finished')) as unknown as RunResponse;
    expect(done.outcome).toMatchObject({ status: 'done', answer: 'parent done' });
  });

  it('should answer the fork errors with their statuses: 400 out of range, 409 still running, 422 a prefix the served flow refuses', async () => {
    const parent = await finishedRun('ranges', 'plain text');
    const outOfRange = await call(t.server, 'POST', `/api/runs/${parent}/fork`, { body: { at: 9 } });
    expect(outOfRange.status, outOfRange.text).toBe(400);
    expect(outOfRange.error?.code).toBe('FORK_POINT_OUT_OF_RANGE');

    // The flow as served now refuses the parent's input: its recorded start does not fit.
    const changed = scriptedFlow([answer.final('x')], { inputSchema: { type: 'object', required: ['orderId'] } });
    expect((await call(t.server, 'PUT', '/api/flows/ranges', { body: changed })).status).toBeLessThan(300);
    const incompatible = await call(t.server, 'POST', `/api/runs/${parent}/fork`, { body: { at: 1 } });
    expect(incompatible.status, incompatible.text).toBe(422);
    expect(incompatible.error?.code).toBe('FORK_PREFIX_INCOMPATIBLE');

    expect((await call(t.server, 'PUT', '/api/flows/slow', { body: scriptedFlow([answer.gate(), answer.final('done')]) })).status).toBeLessThan(300);
    const running = ((await call(t.server, 'POST', '/api/runs', { body: { flow: 'slow', input: 'x' } })).json as RunStartedResponse).traceId;
    const busy = await call(t.server, 'POST', `/api/runs/${running}/fork`, { body: { at: 1 } });
    expect(busy.status, busy.text).toBe(409);
    expect(busy.error?.code).toBe('FORK_RUN_STILL_RUNNING');
    await openGate();
    await waitForRun(t.server, running, (r) => r.status === 'finished');
  });

  it('should answer 404 for an unknown run and 400 for a body that is not a fork request', async () => {
    const unknown = await call(t.server, 'POST', '/api/runs/0123456789abcdef0123456789abcdef/fork', { body: { at: 1 } });
    expect(unknown.status).toBe(404);
    expect(unknown.error?.code).toBe('RUN_NOT_FOUND');
    const parent = await finishedRun();
    const noPoint = await call(t.server, 'POST', `/api/runs/${parent}/fork`, { body: { model: {} } });
    expect(noPoint.status).toBe(400);
    expect(noPoint.error?.code).toBe('HTTP_BODY_INVALID');
    const badIteration = await call(t.server, 'POST', `/api/runs/${parent}/fork`, { body: { at: 1, answers: { first: 'x' } } });
    expect(badIteration.status).toBe(400);
    const diffUnknown = await call(t.server, 'GET', `/api/runs/${parent}/diff/0123456789abcdef0123456789abcdef`);
    expect(diffUnknown.status).toBe(404);
    expect(diffUnknown.error?.code).toBe('RUN_NOT_FOUND');
  });
});

describe('the fork and diff routes behind the token', () => {
  it('should refuse them without the bearer token', async () => {
    const guarded = await startTestServer(dirs, { token: 'a-long-random-token-0123456789' });
    try {
      const parent = '0123456789abcdef0123456789abcdef';
      expect((await call(guarded.server, 'POST', `/api/runs/${parent}/fork`, { body: { at: 1 } })).status).toBe(401);
      expect((await call(guarded.server, 'GET', `/api/runs/${parent}/diff/${parent}`)).status).toBe(401);
    } finally {
      await guarded.close();
    }
  });
});
