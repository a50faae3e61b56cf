import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelLlmConfig } from '../../src/contracts/schema-types.js';
import { validators } from '../../src/contracts/schemas.js';
import { RedflowError } from '../../src/errors.js';
import type { ModelChunk } from '../../src/actors/model.js';
import { createNodeModel } from '../../src/actors/models/nodeModel.js';
import { modelSwitch } from '../../src/machines/modelSwitch.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// The fallback chain a model node builds, against local servers speaking the real wire protocols.

let openAi: FakeChatServer;
let anthropic: FakeAnthropicServer;
beforeAll(async () => {
  [openAi, anthropic] = await Promise.all([startFakeChatCompletionsServer(), startFakeAnthropicServer()]);
});
afterAll(() => Promise.all([openAi.stop(), anthropic.stop()]));
beforeEach(() => {
  openAi.reset();
  anthropic.reset();
});

const request = { traceId: 'trace-1', iteration: 1, messages: [{ role: 'user' as const, content: 'hello' }] };
const env = { OPENAI_API_KEY: 'sk-openai-unit', ANTHROPIC_API_KEY: 'sk-ant-unit' };

function chain(): ModelLlmConfig {
  return {
    provider: 'openai',
    model: 'gpt-4o-mini',
    baseUrl: openAi.baseUrl,
    maxRetries: 0,
    decisionFormat: 'none',
    fallbacks: [{ provider: 'anthropic', model: 'claude-haiku-4-5', baseUrl: anthropic.baseUrl, maxRetries: 0, decisionFormat: 'none' }],
  };
}

async function failureOf(promise: Promise<unknown>): Promise<RedflowError> {
  const error: unknown = await promise.then(() => undefined, (thrown: unknown) => thrown);
  if (!(error instanceof RedflowError)) throw new Error(`expected a RedflowError, got ${String(error)}`);
  return error;
}

describe('a model node with fallbacks', () => {
  it('should say the node\'s own model answered when it did, naming no failure', async () => {
    openAi.enqueue({ kind: 'completion', content: '{"action":"final","message":"hi","confidence":1}' });
    const answer = await createNodeModel(chain(), env).complete(request, AbortSignal.timeout(10_000));
    expect(answer.answeredBy).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(answer.fallbacks).toBeUndefined();
    expect(anthropic.requests).toHaveLength(0);
  });

  it('should stop at a fallback whose key is refused, naming the model that failed before it', async () => {
    openAi.enqueue({ kind: 'error', status: 502, message: 'bad gateway' });
    anthropic.enqueue({ kind: 'error', status: 401, message: 'invalid x-api-key' });
    const error = await failureOf(createNodeModel(chain(), env).complete(request, AbortSignal.timeout(10_000)));
    expect(error.code).toBe('MODEL_REQUEST_REJECTED');
    expect(error.message).toMatch(/^after openai gpt-4o-mini \(MODEL_SERVER_ERROR\) failed, anthropic claude-haiku-4-5: .*HTTP 401/);
  });

  it('should number the fallback\'s live pieces after those of the model that broke off', async () => {
    openAi.enqueue({ kind: 'streamError', content: '{"action":"final","message":"Half an answer that', message: 'server went away' });
    anthropic.enqueue({ kind: 'message', content: '{"action":"final","message":"Whole answer","confidence":1}' });
    const chunks: ModelChunk[] = [];
    const answer = await createNodeModel(chain(), env).complete(request, AbortSignal.timeout(10_000), { onChunk: (chunk) => chunks.push(chunk) });
    expect(answer.fallbacks).toEqual([expect.objectContaining({ code: 'MODEL_SERVER_ERROR' })]);
    const firstOfFallback = chunks.findIndex((chunk) => chunk.text.includes('Whole'));
    expect(chunks.slice(0, firstOfFallback).map((chunk) => chunk.attempt)).toEqual(expect.arrayContaining([1]));
    expect(chunks.slice(firstOfFallback).every((chunk) => chunk.attempt === 2)).toBe(true);
  });

  it('should refuse to build when a fallback is missing its key, naming which fallback', () => {
    const config: ModelLlmConfig = { ...chain(), fallbacks: [{ provider: 'anthropic', model: 'claude-haiku-4-5' }] };
    let error: unknown;
    try {
      createNodeModel(config, { OPENAI_API_KEY: 'sk-openai-unit' });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).code).toBe('MODEL_KEY_MISSING');
    expect((error as RedflowError).message).toMatch(/^fallback 1: /);
  });
});

describe('what model.answered records of a switch', () => {
  it('should keep at most 5 failures and cut each field, whatever a model worker sent', () => {
    const forged = Array.from({ length: 40 }, () => ({ provider: 'p'.repeat(500), model: 'm'.repeat(500), code: 'C'.repeat(500), message: 'x'.repeat(10_000), extra: 'dropped' }));
    const recorded = modelSwitch({ provider: 'anthropic', model: 'claude', secret: 'dropped' }, forged);
    expect(recorded?.fallbacks).toHaveLength(5);
    expect(recorded?.fallbacks[0]?.message.length).toBe(300);
    const event = { id: 'e-3', type: 'model.answered', traceId: 't', seq: 3, time: '2026-01-01T00:00:00.000Z', iteration: 1, data: { text: '{}', durationMs: 1, ...recorded } };
    expect(validators.agentEvent(event), JSON.stringify(validators.agentEvent.errors)).toBe(true);
  });

  it('should record nothing when no model failed before the one that answered, or the reply is malformed', () => {
    expect(modelSwitch({ provider: 'openai', model: 'gpt' }, [])).toBeUndefined();
    expect(modelSwitch(undefined, [{ code: 'X' }])).toBeUndefined();
    expect(modelSwitch({ provider: 'openai', model: 'gpt' }, 'not a list')).toBeUndefined();
  });
});
