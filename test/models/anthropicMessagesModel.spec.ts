import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/actors/model.js';
import {
  createAnthropicMessagesModel,
  resolveAnthropicConfig,
  type AnthropicMessagesModelConfig,
} from '../../src/actors/models/anthropicMessagesModel.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { caught, never, recordingSleep } from '../support/modelCalls.js';
import { startFakeAnthropicServer, unusedAnthropicBaseUrl, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';

const API_KEY = 'sk-ant-test-SECRET-7d41c9e2a8b5';
const USER_KEY = 'sk-ant-user-BYOK-3f8a1c6e9d20';

const REQUEST: ModelRequest = {
  traceId: 'trace-1',
  iteration: 1,
  messages: [
    { role: 'system', content: 'Answer in JSON.' },
    { role: 'system', content: 'Tools: lookup.' },
    { role: 'user', content: 'Where is order A-1001?' },
    { role: 'assistant', content: '{"action":"tool","tool":"lookup","input":{},"confidence":0.5}' },
    { role: 'user', content: 'Observation: shipped' },
  ],
};

const FINAL = '{"action":"final","message":"Shipped","confidence":0.9}';

let server: FakeAnthropicServer;
let waits: number[];

function model(overrides: Partial<AnthropicMessagesModelConfig> = {}) {
  return createAnthropicMessagesModel({
    baseUrl: server.baseUrl,
    model: 'claude-test',
    apiKey: API_KEY,
    timeoutMs: 2000,
    retry: { sleep: recordingSleep(waits), random: () => 0.5, baseDelayMs: 10, maxDelayMs: 40 },
    ...overrides,
  });
}

function expectNoKey(error: unknown, key: string): void {
  expect(inspect(error, { depth: Infinity, showHidden: true })).not.toContain(key);
  if (error instanceof RedflowError) expect(JSON.stringify(error.toInfo())).not.toContain(key);
}

beforeEach(async () => {
  server = await startFakeAnthropicServer();
  waits = [];
});

afterEach(async () => {
  await server.stop();
});

describe('createAnthropicMessagesModel: request shape', () => {
  it('should POST a streaming Messages body to <baseUrl>/v1/messages, system prompts joined into "system"', async () => {
    server.enqueue({ kind: 'message', content: FINAL });
    const actor = model({ temperature: 0.2 });
    expect(actor.kind).toBe('anthropic');
    await actor.complete(REQUEST, never());

    expect(server.requests).toHaveLength(1);
    const [received] = server.requests;
    expect(received?.path).toBe('/v1/messages');
    expect(received?.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(received?.headers.authorization ?? received?.headers['x-api-key']).toContain(API_KEY);
    expect(received?.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      system: 'Answer in JSON.\n\nTools: lookup.',
      messages: REQUEST.messages.slice(2),
      stream: true,
      temperature: 0.2,
    });
  });

  it('should send maxTokens as max_tokens, and no key header at all without a key', async () => {
    server.enqueue({ kind: 'message', content: FINAL });
    await model({ apiKey: undefined, maxTokens: 300 }).complete(REQUEST, never());
    const received = server.requests[0];
    expect(received?.headers.authorization).toBeUndefined();
    expect(received?.headers['x-api-key']).toBeUndefined();
    expect((received?.body as { max_tokens?: unknown }).max_tokens).toBe(300);
  });

  it('should refuse a temperature above 1 (Anthropic\'s range) with MODEL_CONFIG_INVALID', () => {
    expect(() => model({ temperature: 1.5 })).toThrow(expect.objectContaining({ code: ErrorCode.MODEL_CONFIG_INVALID, path: '/temperature' }));
  });
});

describe('createAnthropicMessagesModel: the stream', () => {
  it('should join the text_deltas, count input (cache included) and output tokens, and take the stop reason', async () => {
    const content = '{"message":"naïve café 🚚 ✓ — streamed in pieces"}';
    server.enqueue({ kind: 'message', content, usage: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 5, output_tokens: 17 }, stopReason: 'max_tokens' });
    await expect(model().complete(REQUEST, never())).resolves.toEqual({
      text: content,
      usage: { promptTokens: 125, completionTokens: 17, totalTokens: 142 },
      attempts: 1,
      finishReasons: ['max_tokens'],
    });
  });

  it('should leave usage out when the server sends none', async () => {
    server.enqueue({ kind: 'message', content: FINAL, usage: null });
    const answer = await model().complete(REQUEST, never());
    expect(answer).toEqual({ text: FINAL, attempts: 1, finishReasons: ['end_turn'] });
  });

  it('should fail with MODEL_PROTOCOL_ERROR for an answer of tool_use blocks only', async () => {
    server.enqueue({ kind: 'message', content: '', toolUse: true });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_PROTOCOL_ERROR);
    expect(error.message).toContain('tool_use');
  });

  it('should fail with MODEL_PROTOCOL_ERROR for one JSON message instead of a stream', async () => {
    server.enqueue({ kind: 'raw', body: JSON.stringify({ type: 'message', content: [{ type: 'text', text: FINAL }] }) });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_PROTOCOL_ERROR);
    expect(error.message).toContain('instead of a stream');
  });

  it('should fail with MODEL_RESPONSE_TOO_LARGE for an answer longer than maxResponseBytes', async () => {
    server.enqueue({ kind: 'message', content: 'x'.repeat(5000) });
    const error = await caught(model({ maxResponseBytes: 1000 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_RESPONSE_TOO_LARGE);
    expect(server.requests).toHaveLength(1);
  });

  it('should not follow a redirect', async () => {
    server.enqueue({ kind: 'raw', status: 308, body: '', headers: { location: 'https://elsewhere.test/v1/messages' } });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(error.hint).toContain('redirects');
    expect(server.requests).toHaveLength(1);
  });
});

describe('createAnthropicMessagesModel: failures and retries', () => {
  it('should retry a 429 rate_limit_error honouring Retry-After (capped), then succeed', async () => {
    server.enqueue({ kind: 'error', status: 429, retryAfter: '1' }, { kind: 'message', content: FINAL });
    const answer = await model().complete(REQUEST, never());
    expect(answer).toMatchObject({ text: FINAL, attempts: 2 });
    expect(waits).toEqual([40]);
  });

  it('should retry a 529 overloaded_error and fail with MODEL_SERVER_ERROR quoting it once retries are used up', async () => {
    server.setFallback({ kind: 'error', status: 529, message: 'Overloaded' });
    const error = await caught(model({ maxRetries: 2 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_SERVER_ERROR);
    expect(error.message).toContain('HTTP 529: Overloaded');
    expect(error.message).toContain('3 attempts');
    expect(server.requests).toHaveLength(3);
  });

  it('should retry an overloaded_error event in the middle of the stream, and succeed', async () => {
    server.enqueue({ kind: 'streamError', content: '{"action":', type: 'overloaded_error', message: 'Overloaded' }, { kind: 'message', content: FINAL });
    const answer = await model().complete(REQUEST, never());
    expect(answer).toMatchObject({ text: FINAL, attempts: 2 });
  });

  it('should fail with MODEL_RATE_LIMITED for a rate_limit_error event in the stream once retries are used up', async () => {
    server.setFallback({ kind: 'streamError', type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' });
    const error = await caught(model({ maxRetries: 1 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_RATE_LIMITED);
    expect(error.message).toContain('per-minute rate limit');
  });

  it('should retry a stream cut off before message_stop', async () => {
    server.enqueue({ kind: 'cutStream', content: '{"action":"fi' }, { kind: 'message', content: FINAL });
    expect(await model().complete(REQUEST, never())).toMatchObject({ text: FINAL, attempts: 2 });
  });

  it.each([400, 401, 403, 404])('should not retry HTTP %i and fail with MODEL_REQUEST_REJECTED', async (status) => {
    server.enqueue({ kind: 'error', status, message: `the server says no (${status})` });
    const error = await caught(model().complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_REQUEST_REJECTED);
    expect(error.message).toContain(`HTTP ${status}: the server says no`);
    expect(server.requests).toHaveLength(1);
  });

  it('should hint at the API root without /v1 on a 404', async () => {
    server.enqueue({ kind: 'error', status: 404, message: 'Not Found' });
    const error = await caught(model({ baseUrl: `${server.baseUrl}/v1` }).complete(REQUEST, never()));
    expect(server.requests[0]?.path).toBe('/v1/v1/messages');
    expect(error.hint).toContain('without /v1');
  });

  it('should time out a stream that stalls, and fail with MODEL_TIMEOUT', async () => {
    server.setFallback({ kind: 'endless', chunk: 'event: ping\ndata: {"type": "ping"}\n\n', contentType: 'text/event-stream' });
    const error = await caught(model({ timeoutMs: 100, maxRetries: 0 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_TIMEOUT);
  });

  it('should fail with MODEL_UNAVAILABLE when nothing listens', async () => {
    const error = await caught(model({ baseUrl: await unusedAnthropicBaseUrl(), maxRetries: 1 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_UNAVAILABLE);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('should cancel a stream with RUN_ABORTED when the run is aborted', async () => {
    server.setFallback({ kind: 'endless', chunk: 'event: ping\ndata: {"type": "ping"}\n\n', contentType: 'text/event-stream' });
    const controller = new AbortController();
    const pending = model({ timeoutMs: 30_000 }).complete(REQUEST, controller.signal);
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect((await caught(pending)).code).toBe(ErrorCode.RUN_ABORTED);
  });
});

describe('createAnthropicMessagesModel: keys', () => {
  it('should send the call\'s key instead of the configured one, and redact it when the server echoes it', async () => {
    server.enqueue({ kind: 'message', content: FINAL }, { kind: 'error', status: 401, message: 'invalid x-api-key', echoKey: true });
    await model().complete(REQUEST, never(), { apiKey: USER_KEY });
    const error = await caught(model().complete(REQUEST, never(), { apiKey: USER_KEY }));
    expect(server.requests.map((request) => request.headers.authorization ?? request.headers['x-api-key'])).toEqual([
      expect.stringContaining(USER_KEY),
      expect.stringContaining(USER_KEY),
    ]);
    expect(error.message).toContain('invalid x-api-key: [redacted]');
    expect(error.hint).toContain('the key given with this request');
    expectNoKey(error, USER_KEY);
  });

  it('should redact the configured key from an answer and from a mid-stream error that echo it', async () => {
    server.enqueue(
      { kind: 'message', content: `{"action":"final","message":"key ${API_KEY}","confidence":1}` },
      { kind: 'streamError', type: 'api_error', message: `upstream saw ${API_KEY}` },
    );
    expect((await model().complete(REQUEST, never())).text).toBe('{"action":"final","message":"key [redacted]","confidence":1}');
    const error = await caught(model({ maxRetries: 0 }).complete(REQUEST, never()));
    expect(error.code).toBe(ErrorCode.MODEL_SERVER_ERROR);
    expectNoKey(error, API_KEY);
  });
});

describe('resolveAnthropicConfig', () => {
  it('should default to Anthropic\'s API and $ANTHROPIC_API_KEY', () => {
    expect(resolveAnthropicConfig({ provider: 'anthropic', model: 'claude-sonnet-4-5' }, { ANTHROPIC_API_KEY: 'sk-ant-1', OPENAI_API_KEY: 'sk-not-this' })).toEqual({
      baseUrl: 'https://api.anthropic.com',
      model: 'claude-sonnet-4-5',
      apiKey: 'sk-ant-1',
    });
  });

  it('should take baseUrl from the node, $REDFLOW_MODEL_BASE_URL, then $ANTHROPIC_BASE_URL, and the key from apiKeyEnv', () => {
    const env = { REDFLOW_MODEL_BASE_URL: 'http://redflow', ANTHROPIC_BASE_URL: 'http://anthropic-env', TEAM_KEY: 'sk-team' };
    expect(resolveAnthropicConfig({ provider: 'anthropic', model: 'm', baseUrl: 'http://node' }, env).baseUrl).toBe('http://node');
    expect(resolveAnthropicConfig({ provider: 'anthropic', model: 'm' }, env).baseUrl).toBe('http://redflow');
    expect(resolveAnthropicConfig({ provider: 'anthropic', model: 'm' }, { ANTHROPIC_BASE_URL: 'http://anthropic-env' }).baseUrl).toBe('http://anthropic-env');
    expect(resolveAnthropicConfig({ provider: 'anthropic', model: 'm', apiKeyEnv: 'TEAM_KEY', baseUrl: 'http://x' }, env).apiKey).toBe('sk-team');
  });

  it('should refuse Anthropic\'s API without a key (MODEL_KEY_MISSING), unless the key comes with each request', () => {
    const node = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5' };
    expect(() => resolveAnthropicConfig(node, {})).toThrow(expect.objectContaining({ code: ErrorCode.MODEL_KEY_MISSING, message: expect.stringContaining('$ANTHROPIC_API_KEY') }));
    expect(resolveAnthropicConfig(node, {}, { keyGiven: true }).apiKey).toBeUndefined();
    expect(resolveAnthropicConfig({ ...node, baseUrl: 'http://127.0.0.1:9999' }, {}).apiKey).toBeUndefined();
  });
});
