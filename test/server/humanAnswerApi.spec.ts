// A question the model asks a person, through `redflow serve`'s API (embedded backend): the run
// waits for a person's answer, POST /api/runs/:traceId/answer gives it and the run goes on; bodies
// that are not answers and answers the wait does not take are refused with their codes.
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunResponse, RunStartedResponse } from '../../src/server/apiTypes.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { createEmbeddedRunBackend } from '../../src/server/embeddedRunBackend.js';
import { call, tempDirs, waitForRun } from './serverHarness.js';
import { waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

let server: RedflowServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const escalate = { action: 'escalate', input: { reason: 'over the limit', question: 'May I refund 120 EUR?' } };

async function start(flow: unknown): Promise<RedflowServer> {
  const root = await dirs.make('redflow-human-');
  const flowsDir = path.join(root, 'flows');
  const runsDir = path.join(root, 'runs');
  await writeWaitingFlow(flowsDir, flow, 'waits.json');
  const backend = createEmbeddedRunBackend({ flowsDir, runsDir, env: {}, sweepMs: 50, fsync: 'never' });
  server = await createRedflowServer({ flowsDir, runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, backend });
  return server;
}

describe('a question to a person, over the API', () => {
  it('should show the question, refuse what is not its answer, take the answer and finish', async () => {
    const s = await start(waitingFlow([escalate, waitAnswer.final('refunded')], { requiresApproval: [] }));
    const started = await call(s, 'POST', '/api/runs', { body: { flow: 'waits', input: 'refund A-1' } });
    const { traceId } = started.json as RunStartedResponse;
    const parked = (await waitForRun(s, traceId, (run) => run.status === 'waiting')) as unknown as RunResponse;
    expect(parked.waiting).toMatchObject({ kind: 'human', idempotencyKey: `${traceId}:1`, question: { action: 'escalate', question: 'May I refund 120 EUR?' } });

    expect((await call(s, 'POST', `/api/runs/${traceId}/answer`, { body: { text: '' } })).status).toBe(400);
    expect((await call(s, 'POST', `/api/runs/${traceId}/answer`, { body: { answer: 'yes' } })).status).toBe(400);
    expect((await call(s, 'POST', '/api/runs/no-such-run/answer', { body: { text: 'yes' } })).status).toBe(404);
    const approval = await call(s, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'approve' } });
    expect(approval.status).toBe(409);
    expect(approval.text).toContain('RUN_NOT_WAITING');

    const answered = await call(s, 'POST', `/api/runs/${traceId}/answer`, { body: { text: 'yes, refund it', idempotencyKey: `${traceId}:1` } });
    expect(answered.status, answered.text).toBe(202);
    const done = (await waitForRun(s, traceId, (run) => run.status === 'finished')) as unknown as RunResponse;
    expect(done.outcome).toMatchObject({ status: 'done', answer: 'refunded' });
    const again = await call(s, 'POST', `/api/runs/${traceId}/answer`, { body: { text: 'again' } });
    expect(again.status).toBe(409);
  });

  it('should end the run escalate with the question once its deadline passes', async () => {
    const s = await start(waitingFlow([{ action: 'request_info', input: { question: 'Which order?' } }], { requiresApproval: [], waitTimeoutMs: 50 }));
    const started = await call(s, 'POST', '/api/runs', { body: { flow: 'waits', input: 'refund' } });
    const { traceId } = started.json as RunStartedResponse;
    const ended = (await waitForRun(s, traceId, (run) => run.status === 'finished')) as unknown as RunResponse;
    expect(ended.outcome).toMatchObject({ status: 'escalate', reason: 'info_requested', question: { question: 'Which order?' } });
  });
});
