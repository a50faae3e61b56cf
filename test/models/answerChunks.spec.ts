import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ModelChunk, ModelRequest } from '../../src/actors/model.js';
import { withApiKey } from '../../src/actors/model.js';
import { createOpenAiChatModel } from '../../src/actors/models/openAiChatModel.js';
import { createAnthropicMessagesModel } from '../../src/actors/models/anthropicMessagesModel.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createChunkRedactor } from '../../src/actors/models/chunkRedactor.js';
import { createInProcessTransport } from '../../src/actors/inProcessTransport.js';
import { serveModel, type RunChunk } from '../../src/runtime/serveActors.js';
import { Subject } from '../../src/actors/subjects.js';
import { REDACTED, createSecretRegistry } from '../../src/secrets/secrets.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { recordingSleep } from '../support/modelCalls.js';
import { decisionContractFor } from '../../src/runtime/answerRules.js';
import { agentConfig } from '../support/harness.js';

// A model call can show its answer live, piece by piece (ModelCallOptions.onChunk), while the
// answer it returns (what the log records) stays whole: checked against local servers speaking
// the Chat Completions and the Messages streaming protocols. The pieces are the answer's text
// only: a final answer's message, never the answer format's JSON.

const REQUEST: ModelRequest = { traceId: 'trace-1', iteration: 1, messages: [{ role: 'user', content: 'Where is order A-1001?' }] };
const MESSAGE = 'Order A-1001 shipped with FastShip on Monday; tracking FS-77812.';
const FINAL = `{"action":"final","message":"${MESSAGE}","confidence":0.9}`;
const retry = { sleep: recordingSleep([]), random: () => 0.5, baseDelayMs: 1, maxDelayMs: 2 };

describe('streamed answers, piece by piece', () => {
  let chat: FakeChatServer;
  let anthropic: FakeAnthropicServer;
  beforeEach(async () => {
    chat = await startFakeChatCompletionsServer();
    anthropic = await startFakeAnthropicServer();
  });
  afterEach(async () => {
    await chat.stop();
    await anthropic.stop();
  });

  it('should give each piece of a Chat Completions answer in order, adding up to the answer returned', async () => {
    chat.enqueue({ kind: 'completion', content: FINAL });
    const chunks: ModelChunk[] = [];
    const model = createOpenAiChatModel({ baseUrl: chat.baseUrl, model: 'gpt-test', timeoutMs: 2000, retry });
    const answer = await model.complete(REQUEST, new AbortController().signal, { onChunk: (chunk) => chunks.push(chunk) });
    expect(answer.text).toBe(FINAL);
    // The server sends 8 characters at a time; the pieces are cut at whitespace, so several come.
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.map((c) => c.text).join('')).toBe(MESSAGE);
    expect(chunks.every((c) => c.attempt === 1 && c.text !== '')).toBe(true);
  });

  it("should give only the message of an answer held to the decision schema (OpenAI's json_schema, Anthropic's forced tool), never its wrapper", async () => {
    const decided: ModelRequest = { ...REQUEST, decision: decisionContractFor(agentConfig(), []) };
    const decision = { action: 'final', message: MESSAGE, confidence: 0.9 };
    chat.enqueue({ kind: 'completion', content: JSON.stringify({ decision: { ...decision, output: null } }) });
    anthropic.enqueue({ kind: 'message', content: '', toolUses: [{ name: 'react_decision', input: { decision } }] });
    const models = [
      createOpenAiChatModel({ baseUrl: chat.baseUrl, model: 'gpt-test', timeoutMs: 2000, retry }),
      createAnthropicMessagesModel({ baseUrl: anthropic.baseUrl, model: 'claude-test', timeoutMs: 2000, retry }),
    ];
    for (const model of models) {
      const chunks: ModelChunk[] = [];
      const answer = await model.complete(decided, new AbortController().signal, { onChunk: (chunk) => chunks.push(chunk) });
      expect(JSON.parse(answer.text)).toEqual(decision);
      expect(chunks.map((c) => c.text).join('')).toBe(MESSAGE);
    }
  });

  it('should give each piece of a Messages answer in order, adding up to the answer returned', async () => {
    anthropic.enqueue({ kind: 'message', content: FINAL });
    const chunks: ModelChunk[] = [];
    const model = createAnthropicMessagesModel({ baseUrl: anthropic.baseUrl, model: 'claude-test', timeoutMs: 2000, retry });
    const answer = await model.complete(REQUEST, new AbortController().signal, { onChunk: (chunk) => chunks.push(chunk) });
    expect(answer.text).toBe(FINAL);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.map((c) => c.text).join('')).toBe(MESSAGE);
  });

  it('should number the pieces of a retried attempt, which starts the answer again', async () => {
    chat.enqueue({ kind: 'streamError', content: '{"action":"final","message":"half an ', message: 'overloaded' }, { kind: 'completion', content: FINAL });
    const chunks: ModelChunk[] = [];
    const model = createOpenAiChatModel({ baseUrl: chat.baseUrl, model: 'gpt-test', timeoutMs: 2000, retry });
    const answer = await model.complete(REQUEST, new AbortController().signal, { onChunk: (chunk) => chunks.push(chunk) });
    expect(answer.attempts).toBe(2);
    expect(chunks.filter((c) => c.attempt === 1).map((c) => c.text).join('')).toBe('half an ');
    expect(chunks.filter((c) => c.attempt === 2).map((c) => c.text).join('')).toBe(MESSAGE);
    // Attempt 1's pieces all come before attempt 2's.
    expect(chunks.map((c) => c.attempt)).toEqual([...chunks.map((c) => c.attempt)].sort());
  });

  it('should never show a key the server echoes, even split across pieces of the stream', async () => {
    const key = 'sk-user-CHUNKED-9b1e4d7a2c6f';
    const echo = `{"action":"final","message":"you sent ${key} to me","confidence":0.9}`;
    chat.enqueue({ kind: 'completion', content: echo });
    const chunks: ModelChunk[] = [];
    const model = withApiKey(createOpenAiChatModel({ baseUrl: chat.baseUrl, model: 'gpt-test', timeoutMs: 2000, retry }), key);
    const answer = await model.complete(REQUEST, new AbortController().signal, { onChunk: (chunk) => chunks.push(chunk) });
    expect(answer.text).toBe(`{"action":"final","message":"you sent ${REDACTED} to me","confidence":0.9}`);
    const shown = chunks.map((c) => c.text).join('');
    expect(shown).toBe(`you sent ${REDACTED} to me`);
    // The key is 28 characters and the server sends 8 at a time: no piece holds any 8 of them.
    for (const chunk of chunks) for (let i = 0; i + 8 <= key.length; i += 1) expect(chunk.text).not.toContain(key.slice(i, i + 8));
  });

  it('should redact a key the message spells with JSON escapes, cut across pieces, once decoded', async () => {
    const key = 'sk-user-ESCAPED-5d2c8e1f7a3b';
    // "E" as \u0045, and a newline and a quote escaped around it: the stream never holds the key as written.
    const spelled = key.replace('E', '\\u0045');
    const answerJson = `{"action":"final","message":"line one\\nyou sent ${spelled} and \\"quoted\\" \\u0041","confidence":0.9}`;
    chat.enqueue({ kind: 'completion', content: answerJson });
    const chunks: ModelChunk[] = [];
    const model = withApiKey(createOpenAiChatModel({ baseUrl: chat.baseUrl, model: 'gpt-test', timeoutMs: 2000, retry }), key);
    await model.complete(REQUEST, new AbortController().signal, { onChunk: (chunk) => chunks.push(chunk) });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.text).join('')).toBe(`line one\nyou sent ${REDACTED} and "quoted" A`);
    for (const chunk of chunks) for (let i = 0; i + 8 <= key.length; i += 1) expect(chunk.text).not.toContain(key.slice(i, i + 8));
  });

  it('should show nothing of a tool call, and plain text as it is', async () => {
    chat.enqueue(
      { kind: 'completion', content: '{"message":"looking it up","action":"tool","tool":"lookup","input":{"message":"x"},"confidence":0.5}' },
      { kind: 'completion', content: 'Plain words, {not JSON} and "quotes".' },
    );
    const model = createOpenAiChatModel({ baseUrl: chat.baseUrl, model: 'gpt-test', timeoutMs: 2000, retry });
    const tool: ModelChunk[] = [];
    await model.complete(REQUEST, new AbortController().signal, { onChunk: (chunk) => tool.push(chunk) });
    expect(tool).toEqual([]);
    const plain: ModelChunk[] = [];
    await model.complete(REQUEST, new AbortController().signal, { onChunk: (chunk) => plain.push(chunk) });
    expect(plain.map((c) => c.text).join('')).toBe('Plain words, {not JSON} and "quotes".');
  });

  it('should keep answering when whoever watches the pieces throws', async () => {
    chat.enqueue({ kind: 'completion', content: FINAL });
    const model = createOpenAiChatModel({ baseUrl: chat.baseUrl, model: 'gpt-test', timeoutMs: 2000, retry: { ...retry } });
    const answer = await model.complete(REQUEST, new AbortController().signal, {
      onChunk: () => {
        throw new Error('a broken display');
      },
    });
    expect(answer).toMatchObject({ text: FINAL, attempts: 1 });
  });

  it('should give a scripted answer as one piece', async () => {
    const chunks: ModelChunk[] = [];
    const answer = await createScriptedModel([{ action: 'final', message: 'hi', confidence: 1 }]).complete(REQUEST, new AbortController().signal, {
      onChunk: (chunk) => chunks.push(chunk),
    });
    expect(answer.text).toBe('{"action":"final","message":"hi","confidence":1}');
    expect(chunks).toEqual([{ text: 'hi', attempt: 1 }]);
  });

  it('should publish the pieces of a served model on the run\'s chunk subject, not on its trace subjects', async () => {
    chat.enqueue({ kind: 'completion', content: FINAL });
    const transport = createInProcessTransport();
    const model = createOpenAiChatModel({ baseUrl: chat.baseUrl, model: 'gpt-test', timeoutMs: 2000, retry });
    serveModel(transport, Subject.model('acme', 'llm'), model, { chunkPrefix: 'acme' });
    const published: RunChunk[] = [];
    const onTrace: unknown[] = [];
    transport.subscribe(Subject.runChunk('acme', 'trace-1'), (message) => published.push(message.data as RunChunk));
    transport.subscribe(Subject.allTraces('acme'), (message) => onTrace.push(message.data));
    const reply = await transport.request(Subject.model('acme', 'llm'), REQUEST, { timeoutMs: 5000 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(reply.ok).toBe(true);
    expect(published.map((c) => c.text).join('')).toBe(MESSAGE);
    expect(published.every((c) => c.traceId === 'trace-1' && c.iteration === 1 && c.attempt === 1)).toBe(true);
    expect(onTrace).toEqual([]);
    await transport.close();
  });
});

describe('createChunkRedactor', () => {
  it('should show every character exactly once and never a secret, however the text is split', () => {
    const secret = 'sk-proj-PROPERTY-4c7d9e2b1a';
    const registry = createSecretRegistry();
    registry.add(secret);
    const word = fc.constantFrom('order', 'A-1001', secret, 'shipped', '{"a":1}', '');
    const separator = fc.constantFrom(' ', '\n', '\t', '  ');
    fc.assert(
      fc.property(fc.array(fc.tuple(word, separator), { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 10 }), (words, sizes) => {
        const text = words.map(([w, s]) => w + s).join('');
        const chunks = createChunkRedactor((t) => registry.redact(t));
        const shown: string[] = [];
        let at = 0;
        for (let i = 0; at < text.length; i += 1) {
          const size = sizes[i % sizes.length] as number;
          shown.push(chunks.push(text.slice(at, at + size)));
          at += size;
        }
        shown.push(chunks.flush());
        expect(shown.join('')).toBe(registry.redact(text));
        for (const piece of shown) expect(piece).not.toContain(secret.slice(0, 10));
      }),
    );
  });

  it('should hold back the word being written until whitespace or the end', () => {
    const chunks = createChunkRedactor((t) => t.split('sk-split-ABCDEF123456').join(REDACTED));
    expect(chunks.push('key sk-split-')).toBe('key ');
    expect(chunks.push('ABCDEF123456 end')).toBe(`${REDACTED} `);
    expect(chunks.flush()).toBe('end');
  });
});
