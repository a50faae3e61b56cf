// The run stream (GET /api/runs/:traceId/stream) shows the model's answer as it streams: `event:
// chunk` frames without an id, live only, before the logged event that holds the whole answer.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunChunk } from '../../src/runtime/serveActors.js';
import type { AgentActivityData } from '../../src/agents/activity.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import type { RunStartedResponse } from '../../src/server/apiTypes.js';
import path from 'node:path';
import { createEmbeddedRunBackend } from '../../src/server/embeddedRunBackend.js';
import { createRedflowServer } from '../../src/server/server.js';
import { answer, call, GATE_TOOL, openGate, openSse, resetGates, scriptedFlow, startTestServer, tempDirs, waitForRun, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  resetGates();
  t = await startTestServer(dirs, { keepAliveMs: 40 });
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

describe('the run stream, while a tool reports progress', () => {
  it("should send the tool's progress as a tool_progress activity of its call (?activity=1), never as a chunk", async () => {
    const flow = scriptedFlow([answer.gate(), answer.final('done')]);
    const gate = flow.nodes.find((node) => node.id === 'gate') as { config: { module: string } };
    gate.config.module = path.join(path.dirname(GATE_TOOL), 'progressGate.mjs');
    await call(t.server, 'PUT', '/api/flows/progress', { body: flow });
    const started = await call(t.server, 'POST', '/api/runs', { body: { flow: 'progress', input: 'go' } });
    const { traceId } = started.json as RunStartedResponse;
    const reader = await openSse(t.server, `/api/runs/${traceId}/stream?activity=1`);
    // The call is logged (seq 4) and under way before the tool reports.
    await reader.waitFor((f) => f.id === '4');
    await openGate();
    await reader.waitFor((f) => f.event === 'end');
    const activity = reader.frames.filter((f) => f.event === 'activity').map((f) => JSON.parse(f.data ?? '') as AgentActivityData);
    const start = activity.find((a) => a.type === 'tool_call_start');
    expect(activity.map((a) => a.type).slice(0, 4)).toEqual(['turn_start', 'tool_call_start', 'tool_progress', 'tool_call_end']);
    expect(activity[2]).toEqual({ type: 'tool_progress', turnNumber: 1, toolCallId: start?.type === 'tool_call_start' ? start.toolCall.id : '', progress: 1, total: 1, message: 'through the gate' });
    expect(reader.frames.filter((f) => f.event === 'chunk').every((f) => !(JSON.parse(f.data ?? '') as object).hasOwnProperty('toolCallId'))).toBe(true);
  });
});

describe('the run stream, while the model writes', () => {
  it('should send each piece of an answer as a chunk, before the event that logs the answer, and never on a reconnect', async () => {
    const final = answer.final('streamed to the browser');
    await call(t.server, 'PUT', '/api/flows/chunks', { body: scriptedFlow([answer.gate(), final]) });
    const started = await call(t.server, 'POST', '/api/runs', { body: { flow: 'chunks', input: 'go' } });
    const { traceId } = started.json as RunStartedResponse;
    const reader = await openSse(t.server, `/api/runs/${traceId}/stream`);
    await reader.waitFor((f) => f.id === '4');
    await openGate();
    await reader.waitFor((f) => f.event === 'end');

    const frames = reader.frames;
    // The first answer may have been written before the stream opened: the second one is live for sure.
    const chunkAt = frames.findIndex((f) => f.event === 'chunk' && (JSON.parse(f.data ?? '') as RunChunk).iteration === 2);
    expect(chunkAt).toBeGreaterThan(0);
    const chunk = frames[chunkAt];
    expect(chunk?.id).toBeUndefined();
    expect(JSON.parse(chunk?.data ?? '') as RunChunk).toEqual({ traceId, iteration: 2, attempt: 1, text: 'streamed to the browser' });
    const answeredAt = frames.findIndex((f) => f.event === 'agent-event' && (JSON.parse(f.data ?? '') as AgentEvent).type === 'model.answered' && (JSON.parse(f.data ?? '') as AgentEvent).iteration === 2);
    expect(chunkAt).toBeLessThan(answeredAt);

    // A stream opened once the run is over has the log's events only.
    const again = await openSse(t.server, `/api/runs/${traceId}/stream?after=0`);
    await again.waitFor((f) => f.event === 'end');
    expect(again.frames.filter((f) => f.event === 'chunk')).toEqual([]);
  });

  it('should add the run\'s activity with ?activity=1, in order, going on from where a reconnecting client is', async () => {
    await call(t.server, 'PUT', '/api/flows/activity', { body: scriptedFlow([answer.gate(), answer.final('done')]) });
    const started = await call(t.server, 'POST', '/api/runs', { body: { flow: 'activity', input: 'go' } });
    const { traceId } = started.json as RunStartedResponse;
    // Connected after the tool call began (seq 4): turn 1 is open, with its call under way.
    await waitForRun(t.server, traceId, (run) => run.lastSeq >= 4);
    const reader = await openSse(t.server, `/api/runs/${traceId}/stream?activity=1`, { 'last-event-id': '4' });
    await openGate();
    await reader.waitFor((f) => f.event === 'end');
    const activity = reader.frames.filter((f) => f.event === 'activity').map((f) => JSON.parse(f.data ?? '') as AgentActivityData);
    expect(reader.frames.filter((f) => f.event === 'activity').every((f) => f.id === undefined)).toBe(true);
    expect(activity.map((a) => a.type)).toEqual(['tool_call_end', 'turn_end', 'turn_start', 'content_chunk', 'turn_end']);
    expect(activity[0]).toMatchObject({ type: 'tool_call_end', turnNumber: 1, ok: true });
    expect(activity[3]).toMatchObject({ type: 'content_chunk', turnNumber: 2, content: 'done' });

    const refused = await call(t.server, 'GET', `/api/runs/${traceId}/stream?activity=yes`);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('HTTP_QUERY_INVALID');
  });
  it('should show a piece of an answer after the turns before it, when the log is read slower than the model writes', async () => {
    const root = await dirs.make();
    const flowsDir = path.join(root, 'flows');
    const embedded = createEmbeddedRunBackend({ flowsDir, runsDir: path.join(root, 'runs'), env: {}, allowFiles: [flowsDir, path.dirname(GATE_TOOL)] });
    // The stream's follow reads the log a second late: the second answer's pieces are live before
    // the stream has read the first turn's end.
    const backend = {
      ...embedded,
      async *follow(...args: Parameters<typeof embedded.follow>) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        yield* embedded.follow(...args);
      },
    };
    const server = await createRedflowServer({ flowsDir, backend, port: 0, allowFiles: [path.dirname(GATE_TOOL)] });
    try {
      await call(server, 'PUT', '/api/flows/slow-log', { body: scriptedFlow([answer.gate(), answer.final('done')]) });
      const started = await call(server, 'POST', '/api/runs', { body: { flow: 'slow-log', input: 'go' } });
      expect(started.status, started.text).toBe(201);
      const { traceId } = started.json as RunStartedResponse;
      await waitForRun(server, traceId, (run) => run.lastSeq >= 4);
      const reader = await openSse(server, `/api/runs/${traceId}/stream?activity=1`, { 'last-event-id': '4' });
      await openGate();
      await reader.waitFor((f) => f.event === 'end');
      const activity = reader.frames.filter((f) => f.event === 'activity').map((f) => JSON.parse(f.data ?? '') as AgentActivityData);
      expect(activity.map((a) => a.type)).toEqual(['tool_call_end', 'turn_end', 'turn_start', 'content_chunk', 'turn_end']);
      expect(activity[0]).toMatchObject({ type: 'tool_call_end', turnNumber: 1, ok: true });
    } finally {
      await server.close();
    }
  });
});
