// Runs that wait for an answer from outside, through `redflow serve`'s API (embedded backend):
// a client tool's result and a person's approval or denial posted to the run, the waiting status,
// the live stream across the wait, the deadline, and the requests refused with their codes.
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunResponse, RunStartedResponse } from '../../src/server/apiTypes.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { createEmbeddedRunBackend } from '../../src/server/embeddedRunBackend.js';
import { readVerifiedLog } from '../support/cli.js';
import { call, openSse, tempDirs, waitForRun } from './serverHarness.js';
import { echoEffects, waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const ask = waitAnswer.ask();
const { echo, final } = waitAnswer;

let server: RedflowServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(flow: unknown, sweepMs = 50): Promise<{ server: RedflowServer; runsDir: string }> {
  const root = await dirs.make('redflow-waits-');
  const flowsDir = path.join(root, 'flows');
  const runsDir = path.join(root, 'runs');
  await writeWaitingFlow(flowsDir, flow, 'waits.json');
  const backend = createEmbeddedRunBackend({ flowsDir, runsDir, env: {}, sweepMs, fsync: 'never' });
  server = await createRedflowServer({ flowsDir, runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, backend });
  return { server, runsDir };
}

async function startRun(s: RedflowServer): Promise<string> {
  const started = await call(s, 'POST', '/api/runs', { body: { flow: 'waits', input: 'hi' } });
  expect(started.status, started.text).toBe(201);
  return (started.json as RunStartedResponse).traceId;
}

const waiting = (s: RedflowServer, traceId: string) => waitForRun(s, traceId, (run) => run.status === 'waiting') as unknown as Promise<RunResponse>;

describe('a run that waits for a client tool and an approval, over the API', () => {
  it('should show the wait, take the tool result and the approval, and finish, with the stream following across the waits', async () => {
    const { server: s, runsDir } = await start(waitingFlow([ask, echo('hello'), final('echoed hello')]));
    const traceId = await startRun(s);
    const first = await waiting(s, traceId);
    expect(first.waiting).toMatchObject({ kind: 'client', tool: 'ask_user', input: { question: 'which text?' }, idempotencyKey: `${traceId}:1`, iteration: 1 });
    expect(Date.parse(first.waiting?.deadline ?? '') - Date.parse(first.waiting?.since ?? '')).toBe(24 * 60 * 60 * 1000);
    const listed = (await call(s, 'GET', '/api/runs')).json as { runs: RunResponse[] };
    expect(listed.runs.find((run) => run.traceId === traceId)).toMatchObject({ status: 'waiting', waiting: { kind: 'client' } });

    // The stream of a waiting run stays open, and goes on when the run does.
    const stream = await openSse(s, `/api/runs/${traceId}/stream`);
    await stream.waitFor((frame) => frame.id === String(first.lastSeq));

    const answered = await call(s, 'POST', `/api/runs/${traceId}/tool-results`, { body: { idempotencyKey: `${traceId}:1`, ok: true, output: 'hello' } });
    expect(answered.status, answered.text).toBe(202);
    expect((answered.json as RunResponse).traceId).toBe(traceId);
    const second = await waiting(s, traceId);
    expect(second.waiting).toMatchObject({ kind: 'approval', tool: 'echo', input: { text: 'hello' }, iteration: 2 });

    const approved = await call(s, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'approve', reason: 'fine' } });
    expect(approved.status, approved.text).toBe(202);
    const done = (await waitForRun(s, traceId, (run) => run.status === 'finished')) as unknown as RunResponse;
    expect(done.outcome).toMatchObject({ status: 'done', answer: 'echoed hello' });
    expect(done.waiting).toBeUndefined();

    const end = await stream.waitFor((frame) => frame.event === 'end');
    expect(JSON.parse(end.data ?? '{}')).toMatchObject({ status: 'finished' });
    const types = stream.frames.filter((frame) => frame.event === 'agent-event').map((frame) => (JSON.parse(frame.data ?? '{}') as { type: string }).type);
    expect(types).toContain('tool.approved');
    expect(types.at(-1)).toBe('run.completed');

    // One answer each: the log holds each wait's answer exactly once.
    const { events } = await readVerifiedLog(path.join(runsDir, `${traceId}.jsonl`));
    expect(events.filter((event) => event.type === 'tool.completed' && event.data.tool === 'ask_user')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'tool.approved')).toHaveLength(1);
    expect(events.find((event) => event.type === 'tool.completed' && event.data.tool === 'echo')?.data).toMatchObject({ ok: true, output: { echoed: 'hello' } });
    expect(await echoEffects(path.join(runsDir, '..', 'flows'))).toEqual([`${traceId}:2`]);
  });

  it('should turn a denial into the observation the model gets, and never make the call', async () => {
    const { server: s, runsDir } = await start(waitingFlow([echo('rm -rf /'), final('I will not')]));
    const traceId = await startRun(s);
    await waiting(s, traceId);
    const denied = await call(s, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'deny', reason: 'too dangerous' } });
    expect(denied.status, denied.text).toBe(202);
    const done = (await waitForRun(s, traceId, (run) => run.status === 'finished')) as unknown as RunResponse;
    expect(done.outcome).toMatchObject({ status: 'done', answer: 'I will not' });
    expect(done.envelope.tools.history[0]).toMatchObject({ status: 'failed', error: { code: 'TOOL_DENIED' } });
    const { events } = await readVerifiedLog(path.join(runsDir, `${traceId}.jsonl`));
    expect(events.some((event) => event.type === 'tool.completed')).toBe(false);
    expect(await echoEffects(path.join(runsDir, '..', 'flows'))).toEqual([]);
    expect(events.find((event) => event.type === 'tool.denied')?.data).toMatchObject({ reason: 'too dangerous', error: { code: 'TOOL_DENIED' } });
  });

  it('should abort a waiting run (the editor’s Abort, POST /abort) without making the call', async () => {
    const { server: s, runsDir } = await start(waitingFlow([echo('x'), final('never')]));
    const traceId = await startRun(s);
    await waiting(s, traceId);
    const aborted = await call(s, 'POST', `/api/runs/${traceId}/abort`, { body: { reason: 'not needed any more' } });
    expect(aborted.status, aborted.text).toBe(202);
    const ended = (await waitForRun(s, traceId, (run) => run.status === 'finished')) as unknown as RunResponse;
    expect(ended.outcome).toMatchObject({ status: 'blocked', reason: 'aborted', error: { code: 'RUN_ABORTED' } });
    expect(ended.outcome?.error?.message).toContain('not needed any more');
    expect(await echoEffects(path.join(runsDir, '..', 'flows'))).toEqual([]);
    expect((await call(s, 'POST', `/api/runs/${traceId}/abort`)).status).toBe(409);
  });

  it('should end a wait past its deadline with WAIT_EXPIRED', async () => {
    const { server: s } = await start(waitingFlow([ask, final('never')], { waitTimeoutMs: 300 }));
    const traceId = await startRun(s);
    await waiting(s, traceId);
    const ended = (await waitForRun(s, traceId, (run) => run.status === 'finished', 10_000)) as unknown as RunResponse;
    expect(ended.outcome).toMatchObject({ status: 'blocked', reason: 'wait_expired', error: { code: 'WAIT_EXPIRED' } });
    const late = await call(s, 'POST', `/api/runs/${traceId}/tool-results`, { body: { ok: true, output: 'too late' } });
    expect(late.status).toBe(409);
    expect(late.error?.code).toBe('RUN_ALREADY_FINISHED');
  });
});

describe('answers the API refuses, each with its code', () => {
  it('should refuse an answer past the deadline with WAIT_EXPIRED, and end the run so, before the sweeper comes round', async () => {
    const { server: s } = await start(waitingFlow([waitAnswer.echo('x'), final('never')], { waitTimeoutMs: 200 }), 60_000);
    const traceId = await startRun(s);
    await waiting(s, traceId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = await call(s, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'approve' } });
    expect(late.status).toBe(409);
    expect(late.error?.code).toBe('WAIT_EXPIRED');
    const ended = (await waitForRun(s, traceId, (run) => run.status === 'finished')) as unknown as RunResponse;
    expect(ended.outcome).toMatchObject({ reason: 'wait_expired' });
  });


  it('should say 400 for a body that is not an answer, 404 for no such run, 409 for an answer the wait does not take', async () => {
    const { server: s } = await start(waitingFlow([ask, echo('x'), final('ok')]));
    const traceId = await startRun(s);
    await waiting(s, traceId);
    const bad = [
      { path: 'tool-results', body: { ok: true } },
      { path: 'tool-results', body: { ok: false, output: 1 } },
      { path: 'tool-results', body: { ok: false, error: { message: '' } } },
      { path: 'tool-results', body: { ok: true, output: 1, surprise: true } },
      { path: 'approval', body: { decision: 'maybe' } },
      { path: 'approval', body: { decision: 'approve', iteration: 0 } },
    ];
    for (const { path: route, body } of bad) {
      const answer = await call(s, 'POST', `/api/runs/${traceId}/${route}`, { body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.error?.code).toBe('HTTP_BODY_INVALID');
      expect(answer.error?.message).toContain('schema');
    }
    const notJson = await call(s, 'POST', `/api/runs/${traceId}/approval`, { rawBody: '{"decision":', headers: { 'content-type': 'application/json' } });
    expect(notJson.error?.code).toBe('HTTP_BODY_NOT_JSON');

    const unknown = await call(s, 'POST', '/api/runs/no-such-run/approval', { body: { decision: 'approve' } });
    expect(unknown.status).toBe(404);
    expect(unknown.error?.code).toBe('RUN_NOT_FOUND');

    // The run waits for the client's result: an approval is not what it waits for.
    const wrongKind = await call(s, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'approve' } });
    expect(wrongKind.status).toBe(409);
    expect(wrongKind.error).toMatchObject({ code: 'RUN_NOT_WAITING' });
    expect(wrongKind.error?.message).toContain('ask_user');
    const wrongCall = await call(s, 'POST', `/api/runs/${traceId}/tool-results`, { body: { idempotencyKey: `${traceId}:7`, ok: true, output: 1 } });
    expect(wrongCall.status).toBe(409);
    expect(wrongCall.error?.code).toBe('WAIT_ANSWER_MISMATCH');
    expect(wrongCall.error?.hint).toContain(`${traceId}:1`);

    expect((await call(s, 'POST', `/api/runs/${traceId}/tool-results`, { body: { iteration: 1, ok: true, output: 'x' } })).status).toBe(202);
    await waiting(s, traceId);
    // The first call's result, sent again, comes too late.
    const again = await call(s, 'POST', `/api/runs/${traceId}/tool-results`, { body: { iteration: 1, ok: true, output: 'x' } });
    expect(again.status).toBe(409);
    expect(again.error?.code).toBe('WAIT_ALREADY_ANSWERED');
  });

  it('should take one of two answers sent at once, and refuse the other', async () => {
    const { server: s, runsDir } = await start(waitingFlow([echo('x'), final('ok')]));
    const traceId = await startRun(s);
    await waiting(s, traceId);
    const answers = await Promise.all([
      call(s, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'approve' } }),
      call(s, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'deny', reason: 'no' } }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409]);
    expect(answers.find((answer) => answer.status === 409)?.error?.code).toBe('WAIT_ALREADY_ANSWERED');
    await waitForRun(s, traceId, (run) => run.status === 'finished');
    const { events } = await readVerifiedLog(path.join(runsDir, `${traceId}.jsonl`));
    expect(events.filter((event) => event.type === 'tool.approved' || event.type === 'tool.denied')).toHaveLength(1);
  });
});
