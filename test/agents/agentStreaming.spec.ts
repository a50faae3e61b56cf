import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentActivityEvent } from '../../src/agents/activity.js';
import type { AgentDefinition } from '../../src/agents/agentDefinition.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { AgentEventType, type AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// A definition whose model streams (a local server speaking the Chat Completions streaming wire
// protocol): its answers' text (a final answer's message, nothing of a tool call) reaches onActivity
// piece by piece while the model writes it, and the log records each answer once, whole.

// Laid out as models often write JSON: pieces are cut at whitespace (so a secret is never split).
const TOOL_CALL = JSON.stringify({ action: 'tool', tool: 'lookup_order', input: { order: 'A-1001' }, confidence: 0.6, message: 'Looking the order up first.' }, null, 1);
const MESSAGE = 'Order A-1001 shipped with FastShip on Monday; the tracking number is FS-77812.';
const FINAL = JSON.stringify({ action: 'final', message: MESSAGE, confidence: 0.93 });

const lookup: ToolDefinition<{ order: string }> = {
  name: 'lookup_order',
  description: 'Finds an order',
  inputSchema: { type: 'object', required: ['order'], properties: { order: { type: 'string' } } },
  execute: ({ order }) => ({ order, carrier: 'FastShip', tracking: 'FS-77812' }),
};

let server: FakeChatServer;
let dir: string;
beforeEach(async () => {
  server = await startFakeChatCompletionsServer();
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-agent-stream-'));
});
afterEach(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

function streamingAgent(): AgentDefinition {
  return {
    name: 'order-desk',
    description: 'Answers questions about orders',
    promptConfig: { systemPrompt: 'Answer about orders.', query: 'Where is order ${order}?' },
    modelConfig: { provider: 'openai-compatible', baseUrl: server.baseUrl, model: 'fake-stream', timeoutMs: 5000, maxRetries: 2 },
    toolConfig: { tools: [lookup] },
    inputConfig: { inputs: { order: { type: 'string' } } },
  };
}

type Seen = { readonly activity: AgentActivityEvent } | { readonly event: AgentEvent };

describe('a definition with a streaming model', () => {
  it('should deliver each answer in pieces, in order, before the log records it whole, once', async () => {
    server.enqueue({ kind: 'completion', content: TOOL_CALL }, { kind: 'completion', content: FINAL });
    const seen: Seen[] = [];
    const run = await new AgentExecutor({ runsDir: dir, env: {} }).start(streamingAgent(), {
      inputs: { order: 'A-1001' },
      onActivity: (activity) => seen.push({ activity }),
      onEvent: (event) => seen.push({ event }),
    });
    const iterated: AgentActivityEvent[] = [];
    for await (const activity of run) iterated.push(activity);
    const result = await run.result;
    expect(result).toMatchObject({ success: true, output: 'Order A-1001 shipped with FastShip on Monday; the tracking number is FS-77812.', turnCount: 2 });

    const activity = seen.flatMap((s) => ('activity' in s ? [s.activity] : []));
    expect(iterated).toEqual(activity);
    // The tool call shows nothing live: its message is no answer.
    expect(activity.filter((a) => a.type === 'content_chunk' && a.turnNumber === 1)).toEqual([]);
    for (const [turn, answerText] of [[2, MESSAGE]] as const) {
      const pieces = activity.filter((a) => a.type === 'content_chunk' && a.turnNumber === turn);
      // The server streams 8 characters at a time: the answer comes in many pieces, not at the end in one.
      expect(pieces.length).toBeGreaterThan(5);
      expect(pieces.map((p) => (p.type === 'content_chunk' ? p.content : '')).join('')).toBe(answerText);
      // Every piece is shown before the log has the answer.
      const answeredAt = seen.findIndex((s) => 'event' in s && s.event.type === 'model.answered' && s.event.iteration === turn);
      const lastPieceAt = seen.findLastIndex((s) => 'activity' in s && s.activity.type === 'content_chunk' && s.activity.turnNumber === turn);
      expect(lastPieceAt).toBeLessThan(answeredAt);
    }
    expect(activity.find((a) => a.type === 'thinking')).toMatchObject({ turnNumber: 1, content: 'Looking the order up first.' });

    // The log: the answers once each, whole; nothing of the pieces.
    const file = await readFile(result.logPath as string, 'utf8');
    const { events, problems } = await readJsonlLog(result.logPath as string);
    expect(problems).toEqual([]);
    const known = new Set<string>(Object.values(AgentEventType));
    expect(events.every((e) => known.has(e.type))).toBe(true);
    expect(file.trimEnd().split('\n')).toHaveLength(events.length);
    for (const answerText of [TOOL_CALL, FINAL]) {
      const logged = JSON.stringify(answerText).slice(1, -1);
      expect(file.split(logged)).toHaveLength(2);
    }
    expect(events.filter((e) => e.type === 'model.answered').map((e) => (e.type === 'model.answered' ? e.data.text : ''))).toEqual([TOOL_CALL, FINAL]);
  });

  it('should show a retried answer again from the start under its next attempt', async () => {
    server.enqueue({ kind: 'streamError', content: '{"action":"final","message":"Order A-1001 ', message: 'overloaded' }, { kind: 'completion', content: FINAL });
    const activity: AgentActivityEvent[] = [];
    const result = await new AgentExecutor({ runsDir: dir, env: {} }).execute(streamingAgent(), { inputs: { order: 'A-1001' }, onActivity: (a) => activity.push(a) });
    expect(result.success).toBe(true);
    const pieces = activity.flatMap((a) => (a.type === 'content_chunk' ? [a] : []));
    expect(pieces.filter((p) => p.attempt === 1).map((p) => p.content).join('')).toBe('Order A-1001 ');
    expect(pieces.filter((p) => p.attempt === 2).map((p) => p.content).join('')).toBe(MESSAGE);
    expect(pieces.map((p) => p.attempt)).toEqual([...pieces.map((p) => p.attempt)].sort());
    expect(activity.map((a) => a.type).filter((t) => t !== 'content_chunk')).toEqual(['turn_start', 'turn_end']);
  });
});
