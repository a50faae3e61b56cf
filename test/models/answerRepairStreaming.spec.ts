import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentActivityEvent } from '../../src/agents/activity.js';
import type { AgentDefinition } from '../../src/agents/agentDefinition.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { ErrorCode } from '../../src/errors.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// A real model sometimes answers outside the answer format. Against a local server speaking
// OpenAI's streaming Chat Completions protocol that answers garbage first and a valid decision
// second: with repair the run sends the garbage back with its error and completes; without, it
// ends blocked with INVALID_JSON as before.

const GARBAGE = 'Sure! Order A-1001 has shipped, I think.';
const MESSAGE = 'Order A-1001 shipped with FastShip.';
const FINAL = JSON.stringify({ action: 'final', message: MESSAGE, confidence: 0.9 });

let server: FakeChatServer;
let dir: string;
beforeEach(async () => {
  server = await startFakeChatCompletionsServer();
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-answer-repair-'));
});
afterEach(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

function agent(repairInvalidAnswers?: number): AgentDefinition {
  return {
    name: 'order-desk',
    description: 'Answers questions about orders',
    promptConfig: { systemPrompt: 'Answer about orders.', query: 'Where is order A-1001?' },
    modelConfig: { provider: 'openai-compatible', baseUrl: server.baseUrl, model: 'fake-stream', timeoutMs: 5000, maxRetries: 0 },
    ...(repairInvalidAnswers !== undefined && { runConfig: { repairInvalidAnswers } }),
  };
}

describe('an answer outside the format from a streaming model', () => {
  it('should be sent back with its error and the run complete, with onInvalidAnswer repair 2', async () => {
    server.enqueue({ kind: 'completion', content: GARBAGE }, { kind: 'completion', content: FINAL });
    const activity: AgentActivityEvent[] = [];
    const result = await new AgentExecutor({ runsDir: dir, env: {} }).execute(agent(2), { inputs: {}, onActivity: (a) => activity.push(a) });
    expect(result).toMatchObject({ success: true, output: MESSAGE, turnCount: 2 });

    const { events, problems } = await readJsonlLog(result.logPath as string);
    expect(problems).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'answer.rejected', 'model.requested', 'model.answered', 'run.completed']);
    expect(events[3]?.data).toMatchObject({ text: GARBAGE, error: { code: ErrorCode.INVALID_JSON } });
    // The second request the server got showed the model its answer and what was wrong with it.
    const second = server.requests[1]?.body as { messages: { role: string; content: string }[]; stream?: boolean };
    expect(second.stream).toBe(true);
    expect(second.messages.at(-2)).toEqual({ role: 'assistant', content: GARBAGE });
    expect(second.messages.at(-1)?.content).toContain(`Your answer was rejected: ${ErrorCode.INVALID_JSON}`);
    // Live: the garbage is plain text, shown as it came; the valid answer shows its message only.
    const pieces = (turn: number) => activity.flatMap((a) => (a.type === 'content_chunk' && a.turnNumber === turn ? [a.content] : [])).join('');
    expect(pieces(1)).toBe(GARBAGE);
    expect(pieces(2)).toBe(MESSAGE);
  });

  it('should end the run blocked with INVALID_JSON by default', async () => {
    server.enqueue({ kind: 'completion', content: GARBAGE }, { kind: 'completion', content: FINAL });
    const result = await new AgentExecutor({ runsDir: dir, env: {} }).execute(agent(), { inputs: {} });
    expect(result.success).toBe(false);
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: ErrorCode.INVALID_JSON } });
    expect(server.requests).toHaveLength(1);
  });

  it('should end blocked with the last code when the model keeps answering badly', async () => {
    server.enqueue({ kind: 'completion', content: GARBAGE }, { kind: 'completion', content: '{"action":"dance"}' }, { kind: 'completion', content: GARBAGE });
    const result = await new AgentExecutor({ runsDir: dir, env: {} }).execute(agent(1), { inputs: {} });
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: ErrorCode.ACTION_UNKNOWN } });
    expect(server.requests).toHaveLength(2);
  });

  it('should refuse a repair count outside 0 to 10 before the run starts', async () => {
    await expect(new AgentExecutor({ runsDir: dir, env: {} }).execute(agent(11), { inputs: {} })).rejects.toMatchObject({ code: ErrorCode.AGENT_DEFINITION_INVALID });
    expect(server.requests).toHaveLength(0);
  });
});
