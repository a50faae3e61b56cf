import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelChunk, ModelRequest } from '../../src/actors/model.js';
import { createAnthropicMessagesModel } from '../../src/actors/models/anthropicMessagesModel.js';
import { createOpenAiChatModel } from '../../src/actors/models/openAiChatModel.js';
import { ErrorCode } from '../../src/errors.js';
import { decisionContractFor } from '../../src/runtime/answerRules.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { startFakeChatCompletionsServer, stopFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { agentConfig, countingTool, runWithModel } from '../support/harness.js';

const call = (name: string, args: unknown) => ({ id: `call_${name}`, type: 'function', function: { name, arguments: JSON.stringify(args) } });

describe('protocol "tools" on a Chat Completions server', () => {
  let server: FakeChatServer;
  beforeEach(async () => {
    server = await startFakeChatCompletionsServer();
  });
  afterEach(() => stopFakeChatCompletionsServer(server));
  const model = () => createOpenAiChatModel({ baseUrl: server.baseUrl, model: 'gpt-test', timeoutMs: 5000, maxRetries: 0, protocol: 'tools' });

  it('should offer the allowed tools as functions with a required confidence, one call at a time, and end done on a plain final answer', async () => {
    const { tool, calls } = countingTool();
    server.enqueue(
      { kind: 'completion', content: null, toolCalls: [call('echo', { text: 'hi', confidence: 0.7 })] },
      { kind: 'completion', content: 'It echoed hi.' },
    );
    const { result, events } = await runWithModel(model(), { tools: [tool] });

    expect(result.outcome).toMatchObject({ status: 'done', reason: 'final_answer', answer: 'It echoed hi.' });
    expect(calls).toEqual([{ text: 'hi' }]);
    const answered = events.filter((event) => event.type === 'model.answered').map((event) => JSON.parse((event.data as { text: string }).text) as unknown);
    expect(answered).toEqual([
      { action: 'tool', tool: 'echo', input: { text: 'hi' }, confidence: 0.7 },
      { action: 'final', message: 'It echoed hi.' },
    ]);

    const body = server.requests[0]?.body as { tools: { type: string; function: { name: string; parameters: { properties: object; required: string[] } } }[]; tool_choice: unknown; parallel_tool_calls: unknown; response_format?: unknown };
    expect(body.parallel_tool_calls).toBe(false);
    expect(body.tool_choice).toBe('auto');
    expect(body.response_format).toBeUndefined();
    expect(body.tools.map((offered) => offered.function.name)).toEqual(['echo', 'final_answer', 'escalate', 'request_info', 'delegate']);
    expect(body.tools[0]).toMatchObject({ type: 'function', function: { parameters: { type: 'object', properties: { text: { type: 'string' }, confidence: { type: 'number' } }, required: ['confidence'] } } });
  });

  it('should refuse an answer with two tool calls as ANSWER_MULTIPLE_TOOL_CALLS, keeping both in the log', async () => {
    const { tool, calls } = countingTool();
    server.enqueue({ kind: 'completion', content: null, toolCalls: [call('echo', { text: 'a', confidence: 1 }), call('echo', { text: 'b', confidence: 1 })] });
    const { result, events } = await runWithModel(model(), { tools: [tool] });

    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: ErrorCode.ANSWER_MULTIPLE_TOOL_CALLS } });
    expect(calls).toEqual([]);
    const logged = events.find((event) => event.type === 'model.answered')?.data as { text: string };
    expect(JSON.parse(logged.text)).toHaveLength(2);
  });

  it('should take escalate as its function, with the confidence out of its input: the run waits for a person', async () => {
    server.enqueue({ kind: 'completion', content: null, toolCalls: [call('escalate', { reason: 'refund over limit', question: 'Refund 900 EUR?', confidence: 0.4 })] });
    await expect(runWithModel(model())).rejects.toMatchObject({ code: ErrorCode.RUN_WAITING, message: expect.stringContaining('"Refund 900 EUR?"') as unknown });
  });

  it.each([
    ['arguments that are not JSON', '{"text": "a"', ErrorCode.INVALID_JSON],
    ['a duplicate argument', '{"text":"a","text":"b","confidence":1}', ErrorCode.ANSWER_DUPLICATE_KEY],
    ['no confidence', '{"text":"a"}', ErrorCode.CONFIDENCE_MISSING],
    ['an input the tool refuses', '{"text":5,"confidence":1}', ErrorCode.TOOL_INPUT_INVALID],
    ['a tool it was not offered', null, ErrorCode.TOOL_NOT_ALLOWED],
  ])('should refuse a call with %s as the core refuses it today', async (_name, args, code) => {
    const made = args === null ? call('rm_rf', { confidence: 1 }) : { id: 'c', type: 'function', function: { name: 'echo', arguments: args } };
    server.enqueue({ kind: 'completion', content: null, toolCalls: [made] });
    const { result } = await runWithModel(model());
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code } });
  });

  it('should stream a plain final answer as that plain text, not wrapped in JSON', async () => {
    server.enqueue({ kind: 'completion', content: 'The order shipped on Monday.' });
    const pieces: ModelChunk[] = [];
    const request: ModelRequest = { traceId: 't', iteration: 0, messages: [{ role: 'user', content: 'hi' }], decision: decisionContractFor(agentConfig(), [countingTool().tool]) };
    const answer = await model().complete(request, AbortSignal.timeout(5000), { onChunk: (piece) => pieces.push(piece) });
    expect(pieces.map((piece) => piece.text).join('')).toBe('The order shipped on Monday.');
    expect(JSON.parse(answer.text)).toEqual({ action: 'final', message: 'The order shipped on Monday.' });
  });
});

describe('Anthropic Messages', () => {
  let server: FakeAnthropicServer;
  beforeEach(async () => {
    server = await startFakeAnthropicServer();
  });
  afterEach(() => server.stop());
  const model = (protocol?: 'tools') => createAnthropicMessagesModel({ baseUrl: server.baseUrl, model: 'claude-test', timeoutMs: 5000, maxRetries: 0, ...(protocol && { protocol }) });

  it('should force a tool whose input schema is the decision, and run on the decision in its input', async () => {
    const { tool, calls } = countingTool();
    server.enqueue(
      { kind: 'message', content: '', toolUses: [{ name: 'react_decision', input: { decision: { action: 'tool', tool: 'echo', input: { text: null }, confidence: 0.6, message: null } } }] },
      { kind: 'message', content: '', toolUses: [{ name: 'react_decision', input: { decision: { action: 'final', message: 'Echoed.', confidence: 0.9 } } }] },
    );
    const { result } = await runWithModel(model(), { tools: [tool] });

    expect(result.outcome).toMatchObject({ status: 'done', answer: 'Echoed.' });
    // The nullable stand-in for the absent "text" is gone before the tool sees its input.
    expect(calls).toEqual([{}]);
    const body = server.requests[0]?.body as { tools: { name: string; input_schema: { properties: { decision: { anyOf: unknown[] } } } }[]; tool_choice: unknown };
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'react_decision' });
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0]?.name).toBe('react_decision');
    expect(body.tools[0]?.input_schema.properties.decision.anyOf).toHaveLength(5);
  });

  it('should send the allowed tools natively with parallel use off, and refuse two tool_use blocks as ANSWER_MULTIPLE_TOOL_CALLS', async () => {
    server.enqueue({ kind: 'message', content: 'Let me look twice.', toolUses: [{ name: 'echo', input: { text: 'a', confidence: 1 } }, { name: 'echo', input: { text: 'b', confidence: 1 } }] });
    const { result } = await runWithModel(model('tools'));

    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: ErrorCode.ANSWER_MULTIPLE_TOOL_CALLS } });
    const body = server.requests[0]?.body as { tools: { name: string; input_schema: { required: string[] } }[]; tool_choice: unknown };
    expect(body.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(body.tools[0]).toMatchObject({ name: 'echo', input_schema: { type: 'object', required: ['confidence'] } });
  });

  it('should run a native tool_use call, then end done on plain text', async () => {
    const { tool, calls } = countingTool();
    server.enqueue({ kind: 'message', content: '', toolUses: [{ name: 'echo', input: { text: 'x', confidence: 0.5 } }] }, { kind: 'message', content: 'Done: x.' });
    const { result } = await runWithModel(model('tools'), { tools: [tool] });
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'Done: x.' });
    expect(calls).toEqual([{ text: 'x' }]);
  });
});
