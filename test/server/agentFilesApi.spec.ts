// `.agent.md` agents beside the flows of `redflow serve --flows <dir>`: listed by GET /api/flows
// and run by POST /api/runs as an agent definition runs.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FlowListResponse, RunResponse, RunStartedResponse } from '../../src/server/apiTypes.js';
import { answer, call, scriptedFlow, startTestServer, tempDirs, waitForRun, type TestServer } from './serverHarness.js';
import { HELPER_AGENT_ANSWER, HELPER_AGENT_FILE } from '../support/helperAgentFile.js';

/** An agent file whose model asks a person first: its run waits for the answer. */
const ASKING = `---
name: asker
description: Asks which order, then answers, scripted.
model:
  provider: scripted
  answers:
    - { action: request_info, input: { question: "Which order?" } }
    - { action: final, message: "Order A-1001 shipped.", confidence: 0.9 }
query: Where is my order?
---

You find orders.
`;

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer(dirs);
  await mkdir(path.join(t.flowsDir, 'team'), { recursive: true });
  await writeFile(path.join(t.flowsDir, 'team', 'helper.agent.md'), HELPER_AGENT_FILE);
  await writeFile(path.join(t.flowsDir, 'broken.agent.md'), '---\nname: [unclosed\n');
  await writeFile(path.join(t.flowsDir, 'asker.agent.md'), ASKING);
  await writeFile(path.join(t.flowsDir, 'greeter.json'), JSON.stringify(scriptedFlow([answer.final('hi')])));
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

describe('agent files beside the flows', () => {
  it('should list each .agent.md file with the flows, as an agent with its name and description', async () => {
    const listed = await call(t.server, 'GET', '/api/flows');
    expect(listed.status).toBe(200);
    const { flows } = listed.json as FlowListResponse;
    expect(flows.map((flow) => [flow.id, flow.kind ?? 'flow', flow.valid])).toEqual([
      ['asker.agent.md', 'agent', true],
      ['broken.agent.md', 'agent', false],
      ['greeter', 'flow', true],
      ['team/helper.agent.md', 'agent', true],
    ]);
    expect(flows.find((flow) => flow.id === 'team/helper.agent.md')).toMatchObject({ name: 'helper', description: 'Says hello, scripted.' });
  });

  it('should run an agent file from the API and show its run under its id', async () => {
    const started = await call(t.server, 'POST', '/api/runs', { body: { flow: 'team/helper.agent.md', input: {} } });
    expect(started.status, started.text).toBe(201);
    const { traceId, flow } = started.json as RunStartedResponse;
    expect(flow).toBe('team/helper.agent.md');
    expect(started.headers.location).toBe(`/api/runs/${traceId}`);
    const run = (await waitForRun(t.server, traceId, (r) => r.status === 'finished')) as unknown as RunResponse;
    expect(run).toMatchObject({ status: 'finished', flow: 'team/helper.agent.md', outcome: { status: 'done', answer: HELPER_AGENT_ANSWER } });
  });

  it("should take the answer to an agent file's waiting run over HTTP, as a flow's run takes it", async () => {
    const started = await call(t.server, 'POST', '/api/runs', { body: { flow: 'asker.agent.md', input: {} } });
    expect(started.status, started.text).toBe(201);
    const { traceId } = started.json as RunStartedResponse;
    const parked = (await waitForRun(t.server, traceId, (r) => r.status === 'waiting')) as unknown as RunResponse;
    expect(parked).toMatchObject({ flow: 'asker.agent.md', waiting: { kind: 'human', question: { action: 'request_info', question: 'Which order?' } } });
    const wrongKind = await call(t.server, 'POST', `/api/runs/${traceId}/approval`, { body: { decision: 'approve' } });
    expect([wrongKind.status, wrongKind.error?.code]).toEqual([409, 'RUN_NOT_WAITING']);

    const answered = await call(t.server, 'POST', `/api/runs/${traceId}/answer`, { body: { text: 'A-1001' } });
    expect(answered.status, answered.text).toBe(202);
    const run = (await waitForRun(t.server, traceId, (r) => r.status === 'finished')) as unknown as RunResponse;
    expect(run).toMatchObject({ flow: 'asker.agent.md', outcome: { status: 'done', answer: 'Order A-1001 shipped.' } });
    const again = await call(t.server, 'POST', `/api/runs/${traceId}/answer`, { body: { text: 'again' } });
    expect(again.status).toBe(409);
  });

  it("should abort an agent file's waiting run, as a flow's", async () => {
    const started = await call(t.server, 'POST', '/api/runs', { body: { flow: 'asker.agent.md', input: {} } });
    const { traceId } = started.json as RunStartedResponse;
    await waitForRun(t.server, traceId, (r) => r.status === 'waiting');
    const aborted = await call(t.server, 'POST', `/api/runs/${traceId}/abort`, { body: {} });
    expect(aborted.status, aborted.text).toBeLessThan(300);
    const run = (await waitForRun(t.server, traceId, (r) => r.status === 'finished')) as unknown as RunResponse;
    expect(run.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
  });

  it('should refuse an agent file that is not there, and an input that is not an object of inputs', async () => {
    const missing = await call(t.server, 'POST', '/api/runs', { body: { flow: 'nobody.agent.md', input: {} } });
    expect([missing.status, missing.error?.code]).toEqual([404, 'FLOW_NOT_FOUND']);
    const text = await call(t.server, 'POST', '/api/runs', { body: { flow: 'team/helper.agent.md', input: 'hello' } });
    expect([text.status, text.error?.code]).toEqual([400, 'HTTP_BODY_INVALID']);
  });
});
