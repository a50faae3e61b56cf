// The AG-UI endpoints of `redflow serve`, with @ag-ui/client's HttpAgent as the client: a run
// followed to its end, a stream dropped and followed again, an approval answered through an
// interrupt, a frontend (client) tool, an abort, and the refusals (no token, a bad input).
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRedflowServer, type RedflowServer } from '../../src/server/server.js';
import { createEmbeddedRunBackend } from '../../src/server/embeddedRunBackend.js';
import { call, openGate, resetGates, scriptedFlow, answer as scripted, tempDirs, waitForRun, GATE_TOOL, openSse } from './serverHarness.js';
import { waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());
let server: RedflowServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const TOKEN = 'agui-test-token-0123456789';
const runsDirs = new Map<unknown, string>();
const runsDirOf = (s: RedflowServer): string => runsDirs.get(s.backend) ?? '';

/** A server whose flows are the waiting flow (`waits`) and a gated one (`gated`). */
async function start(flow: unknown): Promise<RedflowServer> {
  resetGates();
  const root = await dirs.make('redflow-agui-');
  const flowsDir = path.join(root, 'flows');
  const runsDir = path.join(root, 'runs');
  await writeWaitingFlow(flowsDir, flow, 'waits.json');
  const backend = createEmbeddedRunBackend({ flowsDir, runsDir, env: {}, sweepMs: 50, fsync: 'never', allowFiles: [flowsDir, path.dirname(GATE_TOOL)] });
  runsDirs.set(backend, runsDir);
  server = await createRedflowServer({ flowsDir, runsDir, editorDir: path.join(root, 'editor'), port: 0, env: {}, backend, token: TOKEN, allowFiles: [path.dirname(GATE_TOOL)] });
  return server;
}

type Seen = { type: string; [field: string]: unknown };

/** An HttpAgent on a flow's AG-UI endpoint, and every event it received (each checked against AG-UI's schema). */
function agentOf(s: RedflowServer, flow = 'waits') {
  const agent = new HttpAgent({ url: `${s.url}api/flows/${flow}/ag-ui`, headers: { Authorization: `Bearer ${TOKEN}` } });
  const events: Seen[] = [];
  const run = async (parameters: Parameters<HttpAgent['runAgent']>[0] = {}) => {
    const from = events.length;
    await agent.runAgent(parameters, {
      onEvent({ event }) {
        expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true);
        events.push(event as Seen);
      },
    });
    return events.slice(from);
  };
  return { agent, events, run };
}

const traceOf = (events: readonly Seen[]) => ((events[0]?.metadata as { redflow: { traceId: string } }).redflow.traceId);

describe('a flow as an AG-UI agent', () => {
  it('should stream a run to its end: steps, the tool call and its result, the answer as text, state', async () => {
    const s = await start(waitingFlow([waitAnswer.echo('hi'), waitAnswer.final('echoed hi')], { requiresApproval: [] }));
    const { agent, run } = agentOf(s);
    agent.addMessage({ id: 'u1', role: 'user', content: 'say hi' });
    const events = await run({ runId: 'run-1' });
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('RUN_STARTED');
    expect(events[0]).toMatchObject({ threadId: agent.threadId, runId: 'run-1' });
    expect(types.at(-1)).toBe('RUN_FINISHED');
    expect(events.at(-1)).toMatchObject({ outcome: { type: 'success' }, result: { status: 'done', answer: 'echoed hi' } });
    const traceId = traceOf(events);
    const key = `${traceId}:1`;
    expect(events.filter((event) => event.type.startsWith('TOOL_CALL'))).toEqual([
      { type: 'TOOL_CALL_START', toolCallId: key, toolCallName: 'echo' },
      { type: 'TOOL_CALL_ARGS', toolCallId: key, delta: '{"text":"hi"}' },
      { type: 'TOOL_CALL_END', toolCallId: key },
      { type: 'TOOL_CALL_RESULT', messageId: `${key}:result`, toolCallId: key, role: 'tool', content: '{"echoed":"hi"}' },
    ]);
    expect(events.filter((event) => event.type === 'STEP_STARTED').map((event) => event.stepName)).toEqual(['iteration 1', 'iteration 2']);
    expect(types.indexOf('STATE_SNAPSHOT')).toBe(1);
    // The client's own view: the final answer is an assistant message, the state the run's envelope.
    const last = agent.messages.filter((message) => message.role === 'assistant').at(-1);
    expect(last?.content).toBe('echoed hi');
    expect(agent.state).toMatchObject({ input: 'say hi', state: { completed: true } });
  });

  it('should follow a run again after its stream dropped: the log, then live, to the end, without aborting it', async () => {
    const flow = scriptedFlow([scripted.gate(), scripted.final('through the gate')]);
    const s = await start(flow);
    await call(s, 'PUT', '/api/flows/gated', { body: flow, headers: { authorization: `Bearer ${TOKEN}` } });
    const { agent } = agentOf(s, 'gated');
    agent.addMessage({ id: 'u1', role: 'user', content: 'go' });
    let traceId = '';
    const dropped = agent.runAgent({ forwardedProps: { redflow: { keepRunning: true } } }, {
      onRunStartedEvent({ event }) {
        traceId = (event.metadata as { redflow: { traceId: string } }).redflow.traceId;
      },
      onToolCallEndEvent() {
        agent.abortRun();
      },
    });
    await dropped.catch(() => undefined);
    expect(traceId).not.toBe('');
    const again = await openSse(s, `/api/runs/${traceId}/ag-ui?token=${TOKEN}`);
    await again.waitFor((frame) => frame.data?.includes('"TOOL_CALL_END"') === true);
    await openGate();
    await again.ended;
    const types = again.frames.filter((frame) => frame.data !== undefined).map((frame) => (JSON.parse(frame.data ?? '{}') as Seen).type);
    expect(types[0]).toBe('RUN_STARTED');
    expect(types.at(-1)).toBe('RUN_FINISHED');
    expect(types).toContain('TOOL_CALL_RESULT');
    // Each logged event's last frame carries its seq: a reconnect after it gets only what follows.
    const ids = again.frames.flatMap((frame) => (frame.id === undefined ? [] : [Number(frame.id)]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const tail = await openSse(s, `/api/runs/${traceId}/ag-ui?token=${TOKEN}`, { 'last-event-id': String(ids.at(-2)) });
    await tail.ended;
    const tailTypes = tail.frames.filter((frame) => frame.data !== undefined).map((frame) => (JSON.parse(frame.data ?? '{}') as Seen).type);
    expect(tailTypes).toEqual(['RUN_STARTED', 'STATE_SNAPSHOT', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'STEP_FINISHED', 'STATE_SNAPSHOT', 'RUN_FINISHED']);
  });

  it('should end the AG-UI run with an interrupt when a call waits for approval, and go on when the resume approves it', async () => {
    const s = await start(waitingFlow([waitAnswer.echo('hello'), waitAnswer.final('echoed hello')]));
    const { agent, run } = agentOf(s);
    agent.addMessage({ id: 'u1', role: 'user', content: 'echo hello' });
    const first = await run();
    const traceId = traceOf(first);
    const finished = first.at(-1);
    expect(finished).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt', interrupts: [{ id: `${traceId}:1`, reason: 'tool_approval', toolCallId: `${traceId}:1` }] } });
    expect(first.some((event) => event.type === 'TOOL_CALL_RESULT')).toBe(false);
    expect((await waitForRun(s, traceId, (r) => r.status === 'waiting', 10_000, TOKEN)).status).toBe('waiting');

    const second = await run({ resume: [{ interruptId: `${traceId}:1`, status: 'resolved', payload: { approved: true, reason: 'fine' } }] });
    expect(second[0]).toMatchObject({ type: 'RUN_STARTED', metadata: { redflow: { traceId } } });
    expect(second.find((event) => event.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: `${traceId}:1`, content: '{"echoed":"hello"}' });
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' }, result: { answer: 'echoed hello' } });

    // The same answer again is refused as the API refuses it: the wait is answered.
    const again = await call(s, 'POST', '/api/flows/waits/ag-ui', {
      headers: { authorization: `Bearer ${TOKEN}` },
      body: { threadId: 't', runId: 'r', messages: [], resume: [{ interruptId: `${traceId}:1`, status: 'resolved', payload: { approved: true } }] },
    });
    expect(again.status).toBe(409);
  });

  it('should hand a client tool to the frontend as a tool call, and take its result from the next input\'s tool message', async () => {
    const s = await start(waitingFlow([waitAnswer.ask('which text?'), waitAnswer.echo('blue'), waitAnswer.final('you said blue')]));
    const { agent, run } = agentOf(s);
    agent.addMessage({ id: 'u1', role: 'user', content: 'ask me' });
    const first = await run();
    const traceId = traceOf(first);
    const key = `${traceId}:1`;
    expect(first.find((event) => event.type === 'TOOL_CALL_START')).toMatchObject({ toolCallId: key, toolCallName: 'ask_user' });
    expect(first.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success', pendingToolCallIds: [key] } });
    // The frontend runs the tool, and answers with a tool message.
    const call = agent.messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : [])).find((c) => c.id === key);
    expect(JSON.parse(call?.function.arguments ?? '{}')).toEqual({ question: 'which text?' });
    agent.addMessage({ id: 'tool-1', role: 'tool', toolCallId: key, content: '"blue"' });
    const second = await run();
    expect(second.find((event) => event.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: key, content: 'blue' });
    // Then the next wait, an approval, is answered in turn: each AG-UI run ends at the run's next wait.
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt', interrupts: [{ id: `${traceId}:2` }] } });
    const third = await run({ resume: [{ interruptId: `${traceId}:2`, status: 'resolved', payload: true }] });
    expect(third.find((event) => event.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: `${traceId}:2`, content: '{"echoed":"blue"}' });
    expect(third.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: { answer: 'you said blue' } });
  });

  it('should ask a person\'s question as an interrupt, and give the model the text the resume answers with', async () => {
    const escalate = { action: 'escalate', input: { reason: 'over the limit', question: 'May I refund 120 EUR?' } };
    const s = await start(waitingFlow([escalate, waitAnswer.final('refunded')], { requiresApproval: [] }));
    const { agent, run } = agentOf(s);
    agent.addMessage({ id: 'u1', role: 'user', content: 'refund me' });
    const first = await run();
    const traceId = traceOf(first);
    expect(first.at(-1)).toMatchObject({ outcome: { type: 'interrupt', interrupts: [{ id: `${traceId}:1`, reason: 'escalate', message: 'May I refund 120 EUR?' }] } });
    // A payload that does not answer a question is refused, and the run still waits.
    const wrong = await call(s, 'POST', '/api/flows/waits/ag-ui', {
      headers: { authorization: `Bearer ${TOKEN}` },
      body: { threadId: 't', runId: 'r', messages: [], resume: [{ interruptId: `${traceId}:1`, status: 'resolved', payload: { approved: true } }] },
    });
    expect(wrong.error?.code).toBe('AGUI_INPUT_INVALID');
    const second = await run({ resume: [{ interruptId: `${traceId}:1`, status: 'resolved', payload: { text: 'yes, refund it' } }] });
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', result: { status: 'done', answer: 'refunded' } });
    const logged = (await call(s, 'GET', `/api/runs/${traceId}/events`, { headers: { authorization: `Bearer ${TOKEN}` } })).json as { events: { type: string; data: { answer?: string } }[] };
    expect(logged.events.find((event) => event.type === 'human.answered')?.data.answer).toBe('yes, refund it');
  });

  it('should abort the run when the client aborts its stream', async () => {
    const flow = scriptedFlow([scripted.gate(), scripted.final('never')]);
    const s = await start(flow);
    await call(s, 'PUT', '/api/flows/gated', { body: flow, headers: { authorization: `Bearer ${TOKEN}` } });
    const { agent } = agentOf(s, 'gated');
    agent.addMessage({ id: 'u1', role: 'user', content: 'go' });
    let traceId = '';
    await agent
      .runAgent({}, {
        onRunStartedEvent({ event }) {
          traceId = (event.metadata as { redflow: { traceId: string } }).redflow.traceId;
        },
        onToolCallEndEvent() {
          agent.abortRun();
        },
      })
      .catch(() => undefined);
    const ended = await waitForRun(s, traceId, (r) => r.status === 'finished', 10_000, TOKEN);
    expect(ended.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
    // Followed again, the run ends cancelled.
    const replay = await openSse(s, `/api/runs/${traceId}/ag-ui?token=${TOKEN}`);
    await replay.ended;
    const last = JSON.parse(replay.frames.filter((frame) => frame.data !== undefined).at(-1)?.data ?? '{}') as Seen;
    expect(last).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
  });

  it('should end the stream of a run whose log stops early with RUN_ERROR RUN_INTERRUPTED, not leave it open', async () => {
    const s = await start(waitingFlow([waitAnswer.echo('hi'), waitAnswer.final('echoed hi')], { requiresApproval: [] }));
    const { agent, run } = agentOf(s);
    agent.addMessage({ id: 'u1', role: 'user', content: 'say hi' });
    const traceId = traceOf(await run());
    // As if the process had been killed mid-run: the log cut after its first three events.
    const logPath = path.join(runsDirOf(s), `${traceId}.jsonl`);
    const lines = (await readFile(logPath, 'utf8')).split('\n').filter((line) => line !== '');
    await writeFile(logPath, `${lines.slice(0, 3).join('\n')}\n`);
    expect((await waitForRun(s, traceId, (r) => r.status === 'interrupted', 10_000, TOKEN)).lastSeq).toBe(3);
    const stream = await openSse(s, `/api/runs/${traceId}/ag-ui?token=${TOKEN}`);
    await stream.ended;
    const last = JSON.parse(stream.frames.filter((frame) => frame.data !== undefined).at(-1)?.data ?? '{}') as Seen;
    expect(last).toMatchObject({ type: 'RUN_ERROR', code: 'RUN_INTERRUPTED' });
  });

  it('should refuse a request without the token (401) and an input that is not a RunAgentInput (400 AGUI_INPUT_INVALID)', async () => {
    const s = await start(waitingFlow([waitAnswer.final('hi')]));
    const input = { threadId: 't', runId: 'r', messages: [{ id: 'u', role: 'user', content: 'hi' }] };
    const noToken = await call(s, 'POST', '/api/flows/waits/ag-ui', { body: input });
    expect(noToken.status).toBe(401);
    expect(noToken.error?.code).toBe('HTTP_UNAUTHORIZED');
    expect((await call(s, 'GET', '/api/runs/abc/ag-ui')).status).toBe(401);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const bad = await call(s, 'POST', '/api/flows/waits/ag-ui', { headers: auth, body: { threadId: 't', messages: 'hi' } });
    expect(bad.status).toBe(400);
    expect(bad.error?.code).toBe('AGUI_INPUT_INVALID');
    expect(bad.error?.message).toContain('/runId');
    const noUser = await call(s, 'POST', '/api/flows/waits/ag-ui', { headers: auth, body: { ...input, messages: [] } });
    expect(noUser.error?.code).toBe('AGUI_INPUT_INVALID');
    const forged = await call(s, 'POST', '/api/flows/waits/ag-ui', { headers: auth, body: { ...input, resume: [{ interruptId: '../etc', status: 'resolved' }] } });
    expect(forged.error?.code).toBe('AGUI_INPUT_INVALID');
    const unknownRun = await call(s, 'POST', '/api/flows/waits/ag-ui', { headers: auth, body: { ...input, resume: [{ interruptId: 'nosuchrun:1', status: 'resolved', payload: true }] } });
    expect(unknownRun.status).toBe(404);
    expect(unknownRun.error?.code).toBe('RUN_NOT_FOUND');
    const unknownFlow = await call(s, 'POST', '/api/flows/nope/ag-ui', { headers: auth, body: input });
    expect(unknownFlow.status).toBe(404);
    // A run is answered only at its own flow's endpoint.
    const { agent, run } = agentOf(s);
    agent.addMessage({ id: 'u1', role: 'user', content: 'hi' });
    const traceId = traceOf(await run());
    const elsewhere = await call(s, 'POST', '/api/flows/other/ag-ui', { headers: auth, body: { ...input, resume: [{ interruptId: `${traceId}:1`, status: 'resolved', payload: true }] } });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.error).toMatchObject({ code: 'AGUI_INPUT_INVALID', message: `run ${traceId} is a run of waits, not of other` });
  });
});
