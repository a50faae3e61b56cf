// What a person or a client writes into a waiting run (an answer, a denial's reason, an abort's
// reason) is recorded cut of every secret the process knows, like an actor's reply: a key pasted
// into an answer by mistake never reaches the log, the API or the model.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunResponse, RunStartedResponse } from '../../src/server/apiTypes.js';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { createEmbeddedRunBackend } from '../../src/server/embeddedRunBackend.js';
import { registerSecret } from '../../src/secrets/secrets.js';
import { call, tempDirs, waitForRun } from './serverHarness.js';
import { waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';

const SECRET = 'sk-answer-secret-5f3a9c21d7';
const dirs = tempDirs();
afterAll(() => dirs.cleanup());

let server: RedflowServer | undefined;
let runsDir = '';
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(flow: unknown): Promise<RedflowServer> {
  const root = await dirs.make('redflow-answer-redaction-');
  const flowsDir = path.join(root, 'flows');
  runsDir = path.join(root, 'runs');
  await writeWaitingFlow(flowsDir, flow, 'waits.json');
  const backend = createEmbeddedRunBackend({ flowsDir, runsDir, env: {}, sweepMs: 50, fsync: 'never' });
  server = await createRedflowServer({ flowsDir, runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, backend });
  return server;
}

/** Starts a run of the waits flow and returns its trace id once it waits. */
async function waitingRun(s: RedflowServer): Promise<string> {
  const started = await call(s, 'POST', '/api/runs', { body: { flow: 'waits', input: 'go' } });
  const { traceId } = started.json as RunStartedResponse;
  await waitForRun(s, traceId, (run) => run.status === 'waiting');
  return traceId;
}

const logOf = (traceId: string) => readFile(path.join(runsDir, `${traceId}.jsonl`), 'utf8');

describe('answers that carry a secret', () => {
  registerSecret(SECRET);

  it("should record a person's answer redacted, in the log, the run's API and what the model is told", async () => {
    const s = await start(waitingFlow([{ action: 'request_info', input: { question: 'Which key?' } }, waitAnswer.final('thanks')], { requiresApproval: [] }));
    const traceId = await waitingRun(s);
    const answered = await call(s, 'POST', `/api/runs/${traceId}/answer`, { body: { text: `it is ${SECRET}` } });
    expect(answered.status, answered.text).toBe(202);
    const done = (await waitForRun(s, traceId, (run) => run.status === 'finished')) as unknown as RunResponse;
    expect(done.outcome).toMatchObject({ status: 'done' });

    const log = await logOf(traceId);
    expect(log).toContain('it is [redacted]');
    expect(log).not.toContain(SECRET);
    expect(JSON.stringify(done)).not.toContain(SECRET);
  });

  it("should record a denial's reason redacted", async () => {
    const s = await start(waitingFlow([waitAnswer.echo('hello'), waitAnswer.final('denied, fine')]));
    const traceId = await waitingRun(s);
    const denied = await call(s, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'deny', reason: `not with ${SECRET}` } });
    expect(denied.status, denied.text).toBe(202);
    await waitForRun(s, traceId, (run) => run.status === 'finished');

    const log = await logOf(traceId);
    expect(log).toContain('not with [redacted]');
    expect(log).not.toContain(SECRET);
  });

  it("should record an abort's reason redacted", async () => {
    const s = await start(waitingFlow([waitAnswer.ask('which?')], { requiresApproval: [] }));
    const traceId = await waitingRun(s);
    const aborted = await call(s, 'POST', `/api/runs/${traceId}/abort`, { body: { reason: `leaked ${SECRET}` } });
    expect(aborted.status, aborted.text).toBeLessThan(300);
    await waitForRun(s, traceId, (run) => run.status === 'finished');

    const log = await logOf(traceId);
    expect(log).toContain('leaked [redacted]');
    expect(log).not.toContain(SECRET);
  });
});
