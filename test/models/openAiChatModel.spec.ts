import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/actors/model.js';
import {
  createOpenAiChatModel,
  resolveOpenAiConfig,
  type OpenAiChatModelConfig,
} from '../../src/actors/models/openAiChatModel.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { validators } from '../../src/contracts/schemas.js';
import { redactSecrets } from '../../src/secrets/secrets.js';
import {
  startFakeChatCompletionsServer,
  stopFakeChatCompletionsServer,
  unusedLocalBaseUrl,
  type FakeChatServer,
} from '../support/fakeChatCompletionsServer.js';
import { caught, never, recordingSleep } from '../support/modelCalls.js';
import { thrown } from '../support/thrown.js';

const API_KEY = 'sk-test-SECRET-5f3a9c1e7b2d4';

const REQUEST: ModelRequest = {
  traceId: 'trace-1',
  iteration: 1,
  messages: [
    { role: 'system', content: 'Answer in JSON.' },
    { role: 'user', content: 'Where is order A-1001?' },
  ],
};

const FINAL = '{"action":"final","message":"Shipped","confidence":0.9}';

/** A Chat Completions stream as OpenAI sends it: the content in deltas, a finish chunk, `[DONE]`. */
function sse(content: string): string {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return `${chunk({ role: 'assistant', content }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`;
}

const SSE = 'text/event-stream';

let server: FakeChatServer;
/** Delays the model asked the backoff to wait, in order. */
let waits: number[];

function model(overrides: Partial<OpenAiChatModelConfig> = {}) {
  return createOpenAiChatModel({
    baseUrl: server.baseUrl,
    model: 'gpt-test',
    apiKey: API_KEY,
    timeoutMs: 2000,
    retry: { sleep: recordingSleep(waits), random: () => 0.5, baseDelayMs: 10, maxDelayMs: 40 },
    ...overrides,
  });
}

/** Fails when the key shows up anywhere in the error: message, hint, info, cause chain. */
function expectNoKey(error: unknown): void {
  expect(inspect(error, { depth: Infinity, showHidden: true })).not.toContain(API_KEY);
  if (error instanceof RedflowError) {
    expect(JSON.stringify(error.toInfo())).not.toContain(API_KEY);
    expect(`${error.message} ${error.hint ?? ''} ${error.stack ?? ''}`).not.toContain(API_KEY);
  }
}

beforeEach(async () => {
  server = await startFakeChatCompletionsServer();
  waits = [];
});

afterEach(async () => {
  await stopFakeChatCompletionsServer(server);
});

describe('createOpenAiChatModel: request shape', () => {
  it('should POST a streaming Chat Completions body to <baseUrl>/chat/completions with a bearer key', async () => {
    server.enqueue({ kind: 'completion', content: FINAL });
    const actor = model({ temperature: 0.2, maxTokens: 256 });
    expect(actor.kind).toBe('openai');
    await actor.complete(REQUEST, never());

    expect(server.requests).toHaveLength(1);
    const [received] = server.requests;
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/v1/chat/completions');
    expect(received?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(received?.headers['content-type']).toMatch(/^application\/json/);
    expect(received?.body).toEqual({
      model: 'gpt-test',
      messages: REQUEST.messages,
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_tokens: 256,
      response_format: { type: 'json_object' },
    });
  });

  it('should send no Authorization header without a key, and no response_format with jsonMode false', async () => {
    server.enqueue({ kind: 'completion', content: FINAL });
    await model({ apiKey: undefined, jsonMode: false }).complete(REQUEST, never());
    const received = server.requests[0];
    expect(received?.headers.authorization).toBeUndefined();
    expect(received?.body).toEqual({ model: 'gpt-test', messages: REQUEST.messages, stream: true, stream_options: { include_usage: true } });
  });

  it('should treat a blank key as no key', async () => {
    server.enqueue({ kind: 'completion', content: FINAL });
    await model({ apiKey: '   ' }).complete(REQUEST, never());
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('should handle a trailing slash in baseUrl, and keep its query on every request', async () => {
    server.enqueue({ kind: 'completion', content: FINAL }, { kind: 'completion', content: FINAL });
    await model({ baseUrl: `${server.baseUrl}//` }).complete(REQUEST, never());
    await model({ baseUrl: `${server.baseUrl}?api-version=2024-10-21` }).complete(REQUEST, never());
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions?api-version=2024-10-21']);
  });

  it('should read the answer from the stream\'s deltas (OpenAI\'s SSE chunks, then [DONE])', async () => {
    const content = '{"message":"naïve café 🚚 ✓ — streamed in pieces"}';
    server.enqueue({ kind: 'completion', content });
    const answer = await model().complete(REQUEST, never());
    expect(answer.text).toBe(content);
    // The answer came as more than one delta: the model really joined a stream.
    expect(Math.ceil(content.length / 8)).toBeGreaterThan(1);
  });

  it('should fail with MODEL_PROTOCOL_ERROR when the server answers with one JSON body instead of a stream', async () => {
    server.enqueue({ kind: 'raw', body: JSON.stringify({ choices: [{ message: { role: 'assistant', content: FINAL }, finish_reason: 'stop' }] }) });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_PROTOCOL_ERROR);
    expect(error.message).toContain('instead of a stream');
    expect(error.hint).toContain('stream');
    expect(server.requests).toHaveLength(1);
  });
});

describe('createOpenAiChatModel: success', () => {
  it('should return the content, mapped usage, attempts 1 and the finish reason', async () => {
    server.enqueue({
      kind: 'completion',
      content: FINAL,
      usage: { prompt_tokens: 31, completion_tokens: 12, total_tokens: 43 },
      finishReason: 'length',
    });
    await expect(model().complete(REQUEST, never())).resolves.toEqual({
      text: FINAL,
      usage: { promptTokens: 31, completionTokens: 12, totalTokens: 43 },
      attempts: 1,
      finishReasons: ['length'],
    });
  });

  it('should take the usage from the stream\'s last chunk, which has no choices', async () => {
    server.enqueue({ kind: 'completion', content: FINAL, usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } });
    expect((await model().complete(REQUEST, never())).usage).toEqual({ promptTokens: 7, completionTokens: 3, totalTokens: 10 });
  });

  it('should leave usage out when the server sends none', async () => {
    server.enqueue({ kind: 'completion', content: FINAL, usage: null });
    const answer = await model().complete(REQUEST, never());
    expect(answer).toEqual({ text: FINAL, attempts: 1, finishReasons: ['stop'] });
    expect('usage' in answer).toBe(false);
  });

  it('should return content that is not JSON unchanged (the core validates it)', async () => {
    server.enqueue({ kind: 'completion', content: 'Sure! Here you go: {"action":' });
    expect((await model().complete(REQUEST, never())).text).toBe('Sure! Here you go: {"action":');
  });
});

describe('createOpenAiChatModel: retries', () => {
  it('should retry a 429 and succeed on the second attempt, honouring Retry-After (capped)', async () => {
    server.enqueue({ kind: 'error', status: 429, message: 'Rate limit reached', retryAfter: '1' }, { kind: 'completion', content: FINAL });
    const answer = await model().complete(REQUEST, never());
    expect(answer.attempts).toBe(2);
    expect(answer.text).toBe(FINAL);
    expect(server.requests).toHaveLength(2);
    // Retry-After: 1 s is capped at maxDelayMs (40); jitter alone would have been 0.5 * 10 = 5.
    expect(waits).toEqual([40]);
  });

  it('should understand Retry-After as an HTTP date', async () => {
    const soon = new Date(Date.now() + 30_000).toUTCString();
    server.enqueue({ kind: 'error', status: 429, retryAfter: soon }, { kind: 'completion', content: FINAL });
    await model({ retry: { sleep: recordingSleep(waits), random: () => 0, baseDelayMs: 10, maxDelayMs: 60_000 } }).complete(REQUEST, never());
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(25_000);
    expect(waits[0]).toBeLessThanOrEqual(30_000);
  });

  it('should fail with MODEL_RATE_LIMITED once retries are used up', async () => {
    server.setFallback({ kind: 'error', status: 429, message: 'You exceeded your current quota' });
    const error = await caught(model({ maxRetries: 2 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_RATE_LIMITED);
    expect(error.message).toContain('You exceeded your current quota');
    expect(error.message).toContain('3 attempts');
    expect(error.retryable).toBe(true);
    expect(error.hint).toMatch(/rate limit/i);
    expect(server.requests).toHaveLength(3);
  });

  it('should retry 5xx and fail with MODEL_SERVER_ERROR after maxRetries', async () => {
    server.enqueue(
      { kind: 'error', status: 500, message: 'boom' },
      { kind: 'error', status: 502 },
      { kind: 'error', status: 503, message: 'overloaded' },
    );
    const error = await caught(model({ maxRetries: 2 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_SERVER_ERROR);
    expect(error.message).toContain('503');
    expect(error.message).toContain('overloaded');
    expect(error.hint).toBeTruthy();
    expect(server.requests).toHaveLength(3);
    // Exponential backoff with random 0.5: 0.5 * 10, 0.5 * 20.
    expect(waits).toEqual([5, 10]);
  });

  it('should succeed after a 5xx when the server recovers', async () => {
    server.enqueue({ kind: 'error', status: 503 }, { kind: 'error', status: 500 }, { kind: 'completion', content: FINAL });
    const answer = await model().complete(REQUEST, never());
    expect(answer.attempts).toBe(3);
  });

  it.each([400, 401, 403, 404, 422])('should not retry HTTP %i and fail with MODEL_REQUEST_REJECTED', async (status) => {
    server.enqueue({ kind: 'error', status, message: `the server says no (${status})` }, { kind: 'completion', content: FINAL });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(error.message).toContain(String(status));
    expect(error.message).toContain(`the server says no (${status})`);
    expect(error.retryable).toBe(false);
    expect(error.hint).toBeTruthy();
    expect(server.requests).toHaveLength(1);
  });

  it('should truncate a long server error message', async () => {
    server.enqueue({ kind: 'error', status: 400, message: 'x'.repeat(5000) });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.message.length).toBeLessThan(600);
    expect(error.message).toContain('xxxx');
  });

  it('should understand an Ollama-style {error: "…"} body', async () => {
    server.enqueue({ kind: 'error', status: 404, body: '{"error":"model \\"llama9\\" not found, try pulling it first"}' });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(error.message).toContain('not found, try pulling it first');
  });

  it('should retry a per-attempt timeout and then fail with MODEL_TIMEOUT', async () => {
    server.setFallback({ kind: 'hang' });
    const started = performance.now();
    const error = await caught(model({ timeoutMs: 100, maxRetries: 1 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_TIMEOUT);
    expect(error.message).toContain('100 ms');
    expect(error.message).toContain('2 attempts');
    expect(error.hint).toContain('timeoutMs');
    expect(server.requests).toHaveLength(2);
    expect(performance.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
  });

  it('should succeed after a timeout when the next attempt is fast', async () => {
    server.enqueue({ kind: 'delay', ms: 1000, then: { kind: 'completion', content: 'late' } }, { kind: 'completion', content: FINAL });
    const answer = await model({ timeoutMs: 100 }).complete(REQUEST, never());
    expect(answer).toMatchObject({ text: FINAL, attempts: 2 });
  });

  it('should apply the timeout to reading the stream too', async () => {
    server.setFallback({ kind: 'endless', chunk: ': keep-alive\n\n', contentType: SSE });
    const error = await caught(model({ timeoutMs: 100, maxRetries: 0, maxResponseBytes: 1024 ** 3 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_TIMEOUT);
  });

  it('should retry an error event in the middle of the stream, then fail with MODEL_SERVER_ERROR quoting it', async () => {
    server.setFallback({ kind: 'streamError', content: '{"action":', message: 'The server had an error while processing your request.' });
    const error = await caught(model({ maxRetries: 1 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_SERVER_ERROR);
    expect(error.message).toContain('broke off its answer');
    expect(error.message).toContain('The server had an error');
    expect(error.message).toContain('2 attempts');
    expect(server.requests).toHaveLength(2);
  });

  it('should retry a stream cut off before its finish_reason, and succeed', async () => {
    server.enqueue({ kind: 'cutStream', content: '{"action":"fi' }, { kind: 'completion', content: FINAL });
    const answer = await model().complete(REQUEST, never());
    expect(answer).toMatchObject({ text: FINAL, attempts: 2 });
  });

  it('should fail with MODEL_UNAVAILABLE when every stream is cut off', async () => {
    server.setFallback({ kind: 'cutStream', content: '{"action":"fi' });
    const error = await caught(model({ maxRetries: 1 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_UNAVAILABLE);
    expect(error.message).toContain('ended its stream before the answer was complete');
  });

  it('should retry a dropped connection and succeed', async () => {
    server.enqueue({ kind: 'destroy' }, { kind: 'completion', content: FINAL });
    const answer = await model().complete(REQUEST, never());
    expect(answer.attempts).toBe(2);
  });

  it('should fail with MODEL_UNAVAILABLE when the connection keeps dropping', async () => {
    server.setFallback({ kind: 'destroy' });
    const error = await caught(model({ maxRetries: 1 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_UNAVAILABLE);
    expect(server.requests).toHaveLength(2);
  });

  it('should fail with MODEL_UNAVAILABLE when nothing listens, naming baseUrl in the hint', async () => {
    const baseUrl = await unusedLocalBaseUrl();
    const error = await caught(model({ baseUrl, maxRetries: 2 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_UNAVAILABLE);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('3 attempts');
    expect(error.hint).toContain(baseUrl);
    expect(error.retryable).toBe(true);
    expect(waits).toHaveLength(2);
  });
});

describe('createOpenAiChatModel: abort', () => {
  it('should cancel an in-flight request with RUN_ABORTED quickly', async () => {
    server.setFallback({ kind: 'hang' });
    const controller = new AbortController();
    const started = performance.now();
    const pending = model({ timeoutMs: 30_000 }).complete(REQUEST, controller.signal);
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await caught(pending);
    expect(error.code).toBe(ErrorCode.RUN_ABORTED);
    expect(performance.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
    expect(server.requests).toHaveLength(1);
    // The server saw the client hang up, i.e. the fetch was really cancelled.
    for (let i = 0; i < 100 && server.clientDisconnects === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(server.clientDisconnects).toBe(1);
  });

  it('should cancel a stream in the middle with RUN_ABORTED quickly', async () => {
    server.setFallback({ kind: 'endless', chunk: ': keep-alive\n\n', contentType: SSE });
    const controller = new AbortController();
    const started = performance.now();
    const pending = model({ timeoutMs: 30_000 }).complete(REQUEST, controller.signal);
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 30));
    controller.abort();
    const error = await caught(pending);
    expect(error.code).toBe(ErrorCode.RUN_ABORTED);
    expect(performance.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
    for (let i = 0; i < 100 && server.clientDisconnects === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(server.clientDisconnects).toBe(1);
  });

  it('should cancel the backoff wait with RUN_ABORTED', async () => {
    server.setFallback({ kind: 'error', status: 503 });
    const controller = new AbortController();
    const started = performance.now();
    // Real timers and a 10 s backoff: only the abort can end this quickly.
    const pending = createOpenAiChatModel({
      baseUrl: server.baseUrl,
      model: 'gpt-test',
      retry: { baseDelayMs: 10_000, maxDelayMs: 10_000, random: () => 1 },
    }).complete(REQUEST, controller.signal);
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    const error = await caught(pending);
    expect(error.code).toBe(ErrorCode.RUN_ABORTED);
    expect(performance.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
    expect(server.requests).toHaveLength(1);
  });

  it('should not send anything when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await caught(model().complete(REQUEST, controller.signal));
    expect(error.code).toBe(ErrorCode.RUN_ABORTED);
    expect(server.requests).toHaveLength(0);
  });
});

describe('createOpenAiChatModel: bad responses', () => {
  const big = sse(FINAL.replace('Shipped', 'x'.repeat(10_000)));

  it('should fail with MODEL_RESPONSE_TOO_LARGE for an answer longer than maxResponseBytes, without retrying', async () => {
    server.enqueue({ kind: 'completion', content: 'x'.repeat(10_000) });
    const error = await caught(model({ maxResponseBytes: 4096 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_RESPONSE_TOO_LARGE);
    expect(error.message).toContain('an answer larger than 4096 bytes');
    expect(server.requests).toHaveLength(1);
  });

  it('should count the answer in UTF-8 bytes, however the server splits it', async () => {
    const content = '🚚'.repeat(300); // 1200 bytes, 600 UTF-16 units
    server.enqueue({ kind: 'raw', body: big.replace(/x{10000}/, content), contentType: SSE }, { kind: 'completion', content });
    expect((await caught(model({ maxResponseBytes: 1199 }).complete(REQUEST, never()))).code).toBe(ErrorCode.MODEL_RESPONSE_TOO_LARGE);
    expect((await model({ maxResponseBytes: 1200 + FINAL.length }).complete(REQUEST, never())).text).toBe(content);
  });

  it('should stop reading a line longer than maxResponseBytes (one event the library would buffer whole)', async () => {
    server.enqueue({ kind: 'raw', body: big, chunked: true, contentType: SSE });
    const error = await caught(model({ maxResponseBytes: 4096 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_RESPONSE_TOO_LARGE);
    expect(error.message).toContain('a line larger than 4096 bytes');
    expect(server.requests).toHaveLength(1);
  });

  it('should stop reading a body without line breaks that never ends', async () => {
    server.enqueue({ kind: 'endless', chunk: 'y'.repeat(512), contentType: SSE });
    const error = await caught(model({ maxResponseBytes: 64 * 1024, timeoutMs: 3000 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_RESPONSE_TOO_LARGE);
  });

  it('should accept an answer of exactly maxResponseBytes, in a stream far longer than that', async () => {
    const content = 'z'.repeat(2000);
    server.enqueue({ kind: 'completion', content });
    const answer = await model({ maxResponseBytes: 2000 }).complete(REQUEST, never());
    expect(answer.text).toBe(content);
  });

  it('should fail with MODEL_PROTOCOL_ERROR for invalid UTF-8', async () => {
    const [head, tail] = sse('@@').split('@@') as [string, string];
    server.enqueue({ kind: 'raw', body: Buffer.concat([Buffer.from(head), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(tail)]), contentType: SSE });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_PROTOCOL_ERROR);
    expect(error.message).toContain('UTF-8');
    expect(server.requests).toHaveLength(1);
  });

  it('should decode multi-byte UTF-8 split across network chunks', async () => {
    const content = `{"message":"${'naïve café 🚚 ✓ '.repeat(200)}"}`;
    server.enqueue({ kind: 'raw', body: sse(content), chunked: true, contentType: SSE });
    expect((await model().complete(REQUEST, never())).text).toBe(content);
  });

  it('should fail with MODEL_PROTOCOL_ERROR for a web page where the API should be', async () => {
    server.enqueue({ kind: 'raw', body: '<html><body>Welcome to nginx!</body></html>', contentType: 'text/html' });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_PROTOCOL_ERROR);
    expect(error.message).toContain('text/html');
    expect(error.hint).toContain('baseUrl');
  });

  it('should fail with MODEL_PROTOCOL_ERROR for a stream event that is not JSON', async () => {
    server.enqueue({ kind: 'raw', body: 'data: {"choices": [\n\ndata: [DONE]\n\n', contentType: SSE });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_PROTOCOL_ERROR);
    expect(error.message).toContain('not JSON');
  });

  it('should fail with MODEL_PROTOCOL_ERROR for tool_calls without content', async () => {
    server.enqueue({
      kind: 'completion',
      content: null,
      toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
    });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_PROTOCOL_ERROR);
    expect(error.message).toContain('tool_calls');
  });

  it.each([
    ['a JSON array', 'data: [1,2]\n\ndata: [DONE]\n\n'],
    ['a number', 'data: 42\n\ndata: [DONE]\n\n'],
  ])('should fail with MODEL_PROTOCOL_ERROR for a stream event that is %s', async (_, body) => {
    server.enqueue({ kind: 'raw', body, contentType: SSE });
    expect((await caught(model().complete(REQUEST, never()))).code).toBe(ErrorCode.MODEL_PROTOCOL_ERROR);
  });

  it('should not follow redirects', async () => {
    server.enqueue({ kind: 'raw', status: 307, body: '', headers: { location: 'http://elsewhere.test/v1/chat/completions?token=x' } });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(error.message).toContain('redirect to http://elsewhere.test/v1/chat/completions');
    expect(error.message).not.toContain('token=x');
    expect(server.requests).toHaveLength(1);
  });
});

describe('MODEL_RESPONSE_TOO_LARGE names a setting the model node takes', () => {
  it('should hint at "maxResponseBytes", which the model.llm schema accepts and the model honours', async () => {
    server.enqueue({ kind: 'completion', content: 'x'.repeat(10_000) });
    const error = await caught(model({ maxResponseBytes: 1024 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_RESPONSE_TOO_LARGE);
    const hinted = /"(\w+)" in the model node's config/.exec(error.hint ?? '')?.[1];
    expect(hinted).toBe('maxResponseBytes');
    const node = { model: 'gpt-test', baseUrl: server.baseUrl, [hinted as string]: 64 * 1024 };
    expect(validators.modelLlmConfig(node), JSON.stringify(validators.modelLlmConfig.errors)).toBe(true);
    // Raised as the hint says, the same answer goes through.
    server.enqueue({ kind: 'completion', content: 'x'.repeat(10_000) });
    const config = { ...resolveOpenAiConfig(node, {}), retry: { sleep: recordingSleep(waits) } };
    expect((await createOpenAiChatModel(config).complete(REQUEST, never())).text).toHaveLength(10_000);
  });
});

describe('createOpenAiChatModel: the API key never leaks', () => {
  it('should redact a key the server echoes in its 401 message', async () => {
    server.enqueue({ kind: 'error', status: 401, message: `Incorrect API key provided: ${API_KEY}.` });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(error.message).toContain('Incorrect API key provided');
    expectNoKey(error);
  });

  it('should keep the key out of every kind of failure', async () => {
    const unreachable = await unusedLocalBaseUrl();
    const failures: RedflowError[] = [];
    server.enqueue({ kind: 'error', status: 500, message: `upstream said ${API_KEY}` });
    failures.push(await caught(model({ maxRetries: 0 }).complete(REQUEST, never())));
    server.enqueue({ kind: 'error', status: 429, message: `limit for ${API_KEY}` });
    failures.push(await caught(model({ maxRetries: 0 }).complete(REQUEST, never())));
    server.enqueue({ kind: 'raw', body: `not json ${API_KEY}`, contentType: `text/${API_KEY}` });
    failures.push(await caught(model().complete(REQUEST, never())));
    server.enqueue({ kind: 'streamError', content: `partial ${API_KEY}`, message: `oops ${API_KEY}` });
    failures.push(await caught(model({ maxRetries: 0 }).complete(REQUEST, never())));
    server.enqueue({ kind: 'raw', status: 302, body: '', headers: { location: `http://127.0.0.1/${API_KEY}/v1` } });
    failures.push(await caught(model().complete(REQUEST, never())));
    failures.push(await caught(model({ baseUrl: unreachable, maxRetries: 0 }).complete(REQUEST, never())));
    server.enqueue({ kind: 'hang' });
    failures.push(await caught(model({ timeoutMs: 50, maxRetries: 0 }).complete(REQUEST, never())));
    const controller = new AbortController();
    controller.abort();
    failures.push(await caught(model().complete(REQUEST, controller.signal)));

    expect(failures.map((f) => f.code)).toEqual([
      ErrorCode.MODEL_SERVER_ERROR,
      ErrorCode.MODEL_RATE_LIMITED,
      ErrorCode.MODEL_PROTOCOL_ERROR,
      ErrorCode.MODEL_SERVER_ERROR,
      ErrorCode.MODEL_REQUEST_REJECTED,
      ErrorCode.MODEL_UNAVAILABLE,
      ErrorCode.MODEL_TIMEOUT,
      ErrorCode.RUN_ABORTED,
    ]);
    for (const failure of failures) expectNoKey(failure);
    // The key was sent, so redaction (not absence) is what kept it out.
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('should redact the key from a 200 answer whose content echoes it (a buggy or hostile proxy)', async () => {
    server.enqueue({ kind: 'completion', content: `{"action":"final","message":"your key is ${API_KEY}","confidence":0.9}` });
    const answer = await model().complete(REQUEST, never());
    expect(answer.text).toBe('{"action":"final","message":"your key is [redacted]","confidence":0.9}');
    expect(JSON.stringify(answer)).not.toContain(API_KEY);
  });

  it('should reject a key with a line break without echoing it', () => {
    const error = thrown(() => createOpenAiChatModel({ baseUrl: server.baseUrl, model: 'm', apiKey: `${API_KEY}\nX-Evil: 1` }));
    expect((error as RedflowError).code).toBe(ErrorCode.MODEL_CONFIG_INVALID);
    expectNoKey(error);
  });
});

describe('createOpenAiChatModel: config checks', () => {
  it.each([
    ['a non-URL baseUrl', { baseUrl: 'not a url' }],
    ['a non-http baseUrl', { baseUrl: 'ftp://example.com/v1' }],
    ['credentials in baseUrl', { baseUrl: 'https://user:pw@example.com/v1' }],
    ['an empty model', { model: '  ' }],
    ['a zero timeout', { timeoutMs: 0 }],
    ['negative maxRetries', { maxRetries: -1 }],
  ])('should reject %s with MODEL_CONFIG_INVALID', (_, overrides) => {
    expect(() => model(overrides as Partial<OpenAiChatModelConfig>)).toThrow(
      expect.objectContaining({ code: ErrorCode.MODEL_CONFIG_INVALID }),
    );
  });
});

describe('resolveOpenAiConfig', () => {
  it('should default baseUrl to OpenAI and read the key from OPENAI_API_KEY', () => {
    expect(resolveOpenAiConfig({ model: 'gpt-4o-mini' }, { OPENAI_API_KEY: 'k1' })).toEqual({
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4o-mini',
      apiKey: 'k1',
    });
  });

  it('should prefer the node baseUrl, then REDFLOW_MODEL_BASE_URL, then OPENAI_BASE_URL', () => {
    const env = { REDFLOW_MODEL_BASE_URL: 'http://redflow/v1', OPENAI_BASE_URL: 'http://openai-env/v1' };
    expect(resolveOpenAiConfig({ model: 'm', baseUrl: 'http://node/v1' }, env).baseUrl).toBe('http://node/v1');
    expect(resolveOpenAiConfig({ model: 'm' }, env).baseUrl).toBe('http://redflow/v1');
    expect(resolveOpenAiConfig({ model: 'm' }, { OPENAI_BASE_URL: 'http://openai-env/v1' }).baseUrl).toBe('http://openai-env/v1');
  });

  it('should read the key from apiKeyEnv and allow no key at all', () => {
    expect(resolveOpenAiConfig({ model: 'm', apiKeyEnv: 'MY_KEY' }, { MY_KEY: 'k2', OPENAI_API_KEY: 'k1' }).apiKey).toBe('k2');
    const local = resolveOpenAiConfig({ model: 'llama3.1', baseUrl: 'http://127.0.0.1:11434/v1' }, {});
    expect('apiKey' in local).toBe(false);
  });

  it('should take the model from REDFLOW_MODEL when the node has none', () => {
    expect(resolveOpenAiConfig({}, { REDFLOW_MODEL: 'qwen2.5', OPENAI_API_KEY: 'sk-test' }).model).toBe('qwen2.5');
    expect(resolveOpenAiConfig({ model: 'node-model' }, { REDFLOW_MODEL: 'env-model', OPENAI_API_KEY: 'sk-test' }).model).toBe('node-model');
  });

  it('should fail with MODEL_CONFIG_INVALID and a hint when no model is given', () => {
    const error = thrown(() => resolveOpenAiConfig({}, {}));
    expect((error as RedflowError).code).toBe(ErrorCode.MODEL_CONFIG_INVALID);
    expect((error as RedflowError).hint).toContain('REDFLOW_MODEL');
  });

  it('should refuse OpenAI\'s API without a key, with MODEL_KEY_MISSING naming the variable, before any request', () => {
    const attempt = (config: Parameters<typeof resolveOpenAiConfig>[0], env: NodeJS.ProcessEnv) => () => resolveOpenAiConfig(config, env);
    for (const [config, env, variable] of [
      [{ model: 'gpt-4o-mini' }, {}, 'OPENAI_API_KEY'],
      [{ model: 'gpt-4o-mini', provider: 'openai' as const }, { OPENAI_API_KEY: '  ' }, 'OPENAI_API_KEY'],
      [{ model: 'gpt-4o-mini', apiKeyEnv: 'TEAM_OPENAI_KEY' }, { OPENAI_API_KEY: 'sk-not-this-one' }, 'TEAM_OPENAI_KEY'],
      [{ model: 'gpt-4o-mini', baseUrl: 'https://API.openai.com/v1/' }, {}, 'OPENAI_API_KEY'],
    ] as const) {
      const error = thrown(attempt(config, env));
      expect((error as RedflowError).code, JSON.stringify(config)).toBe(ErrorCode.MODEL_KEY_MISSING);
      expect((error as RedflowError).message).toContain(`$${variable}`);
      expect((error as RedflowError).hint).toContain(`export ${variable}=`);
    }
  });

  it('should need no key for a server other than OpenAI\'s (no Authorization header is sent)', () => {
    expect(resolveOpenAiConfig({ model: 'llama3.1', provider: 'ollama' }, {}).apiKey).toBeUndefined();
    expect(resolveOpenAiConfig({ model: 'm', baseUrl: 'http://127.0.0.1:8000/v1' }, {}).baseUrl).toBe('http://127.0.0.1:8000/v1');
    expect(resolveOpenAiConfig({ model: 'm' }, { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }).apiKey).toBeUndefined();
    expect(resolveOpenAiConfig({ model: 'm', apiKeyEnv: 'TEAM_KEY' }, { TEAM_KEY: 'sk-team' }).apiKey).toBe('sk-team');
  });

  it('should pass the tuning options through', () => {
    expect(
      resolveOpenAiConfig(
        { model: 'm', temperature: 0, maxTokens: 100, timeoutMs: 5000, maxRetries: 1, jsonMode: false },
        { OPENAI_API_KEY: 'sk-test' },
      ),
    ).toEqual({
      baseUrl: 'https://api.openai.com/v1',
      model: 'm',
      apiKey: 'sk-test',
      temperature: 0,
      maxTokens: 100,
      timeoutMs: 5000,
      maxRetries: 1,
      jsonMode: false,
    });
  });
});

describe('createOpenAiChatModel: a key given to the call', () => {
  const USER_KEY = 'sk-user-BYOK-9c2e7a4f1b3d';

  it('should send the call\'s key instead of the configured one, for that call only', async () => {
    server.enqueue({ kind: 'completion', content: FINAL }, { kind: 'completion', content: FINAL }, { kind: 'completion', content: FINAL });
    const actor = model();
    await actor.complete(REQUEST, never(), { apiKey: USER_KEY });
    await actor.complete(REQUEST, never());
    await model({ apiKey: undefined }).complete(REQUEST, never(), { apiKey: USER_KEY });
    expect(server.requests.map((request) => request.headers.authorization)).toEqual([`Bearer ${USER_KEY}`, `Bearer ${API_KEY}`, `Bearer ${USER_KEY}`]);
  });

  it('should redact the call\'s key from an echoing answer and error, say where it came from, and forget it afterwards', async () => {
    server.enqueue(
      { kind: 'completion', content: `{"action":"final","message":"you sent ${USER_KEY}","confidence":0.9}` },
      { kind: 'error', status: 401, message: `Incorrect API key provided: ${USER_KEY}` },
    );
    const answer = await model().complete(REQUEST, never(), { apiKey: USER_KEY });
    expect(answer.text).toBe('{"action":"final","message":"you sent [redacted]","confidence":0.9}');
    const error = await caught(model().complete(REQUEST, never(), { apiKey: USER_KEY }));
    expect(error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(error.message).toContain('Incorrect API key provided: [redacted]');
    expect(error.hint).toContain('the key given with this request');
    expect(inspect(error, { depth: Infinity, showHidden: true })).not.toContain(USER_KEY);
    // Held only while the calls ran: the process does not keep every key it was given.
    expect(redactSecrets(`later ${USER_KEY}`)).toBe(`later ${USER_KEY}`);
  });

  it('should refuse a call\'s key that cannot be sent in a header, without echoing it or sending anything', async () => {
    const error = await caught(model().complete(REQUEST, never(), { apiKey: `${USER_KEY}\r\nX-Evil: 1` }));
    expect(error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(inspect(error, { depth: Infinity, showHidden: true })).not.toContain(USER_KEY);
    expect(server.requests).toHaveLength(0);
  });
});
