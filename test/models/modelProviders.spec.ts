import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withApiKey, type ModelActor, type ModelCallOptions } from '../../src/actors/model.js';
import { ModelProvider } from '../../src/actors/models/modelProviders.js';
import { createNodeModel, resolveModelConfig } from '../../src/actors/models/nodeModel.js';
import type { ModelLlmConfig } from '../../src/contracts/schema-types.js';
import { ErrorCode } from '../../src/errors.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { buildModel } from '../../src/runtime/buildModel.js';
import { nodeOf, validFlow } from '../flows/flowFixtures.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The small valid flow of the flow tests, with `config` as its model node's config. */
function flowWithModel(config: Record<string, unknown>) {
  const flow = validFlow();
  nodeOf(flow, 'llm').config = config;
  return flow;
}

describe('model providers', () => {
  it('should be the list the flow schema allows', () => {
    const schema = JSON.parse(readFileSync(path.join(root, 'schemas', 'flow.schema.json'), 'utf8')) as {
      definitions: { ModelLlmConfig: { properties: { provider: { enum: string[] } } } };
    };
    expect([...schema.definitions.ModelLlmConfig.properties.provider.enum].sort()).toEqual(Object.values(ModelProvider).sort());
  });

  it('should make validateFlow report an unknown provider as MODEL_PROVIDER_UNKNOWN, listing the known ones, and still check the rest', () => {
    const validation = validateFlow(flowWithModel({ provider: 'antropic', model: 'claude', temperature: 7 }));
    expect(validation.ok).toBe(false);
    const errors = validation.ok ? [] : validation.errors;
    expect(errors.map((error) => error.code)).toEqual([ErrorCode.MODEL_PROVIDER_UNKNOWN, ErrorCode.NODE_CONFIG_INVALID]);
    expect(errors[0]).toMatchObject({ path: 'nodes[2].config.provider', nodeId: 'llm' });
    expect(errors[0]?.message).toContain('"antropic"');
    expect(errors[0]?.hint).toContain('"anthropic"');
    expect(errors[1]?.path).toBe('nodes[2].config.temperature');
    expect(validateFlow(flowWithModel({ provider: 'anthropic', model: 'claude' })).ok).toBe(true);
  });

  it('should refuse an unknown provider when a model is built from an unchecked config', async () => {
    const config = { provider: 'gemini', model: 'x' } as unknown as ModelLlmConfig;
    expect(() => resolveModelConfig(config, {})).toThrow(expect.objectContaining({ code: ErrorCode.MODEL_PROVIDER_UNKNOWN }));
    await expect(buildModel({ model: { id: 'llm', config }, baseDir: root } as never)).rejects.toMatchObject({ code: ErrorCode.MODEL_PROVIDER_UNKNOWN });
  });

  it('should speak Anthropic\'s Messages for "anthropic" and Chat Completions for every other provider', () => {
    expect(createNodeModel({ provider: 'anthropic', model: 'claude', baseUrl: 'http://127.0.0.1:1' }, {}).kind).toBe('anthropic');
    for (const provider of ['openai', 'openai-compatible', 'ollama', 'vllm', 'llamacpp'] as const) {
      expect(createNodeModel({ provider, model: 'm', baseUrl: 'http://127.0.0.1:1/v1' }, {}).kind).toBe('openai');
    }
    expect(resolveModelConfig({ model: 'm' }, { OPENAI_API_KEY: 'sk-x' }).protocol).toBe('openai');
  });

  it('should not require the environment\'s key when the run brings its own', () => {
    expect(() => createNodeModel({ model: 'gpt-4o-mini' }, {})).toThrow(expect.objectContaining({ code: ErrorCode.MODEL_KEY_MISSING }));
    expect(() => createNodeModel({ provider: 'anthropic', model: 'claude' }, {})).toThrow(expect.objectContaining({ code: ErrorCode.MODEL_KEY_MISSING }));
    expect(createNodeModel({ model: 'gpt-4o-mini' }, {}, { apiKey: 'sk-user-0001' }).kind).toBe('openai');
    expect(createNodeModel({ provider: 'anthropic', model: 'claude' }, {}, { apiKey: 'sk-user-0001' }).kind).toBe('anthropic');
  });
});

describe('withApiKey', () => {
  /** A model that reports the options of each call. */
  function recorder(): ModelActor & { calls: (ModelCallOptions | undefined)[] } {
    const calls: (ModelCallOptions | undefined)[] = [];
    return {
      kind: 'recorder',
      calls,
      complete: async (_request, _signal, options) => {
        calls.push(options);
        return { text: '{}', attempts: 1 };
      },
    };
  }
  const request = { traceId: 't', iteration: 1, messages: [] };

  it('should give the key to every call, let a call\'s own key win, and leave the request alone', async () => {
    const inner = recorder();
    const model = withApiKey(inner, 'sk-bound-0001');
    expect(model.kind).toBe('recorder');
    await model.complete(request, new AbortController().signal);
    await model.complete(request, new AbortController().signal, { apiKey: undefined });
    await model.complete(request, new AbortController().signal, { apiKey: 'sk-call-0002' });
    expect(inner.calls).toEqual([{ apiKey: 'sk-bound-0001' }, { apiKey: 'sk-bound-0001' }, { apiKey: 'sk-call-0002' }]);
    expect(request).toEqual({ traceId: 't', iteration: 1, messages: [] });
  });

  it('should return the model itself for a blank key', () => {
    const inner = recorder();
    expect(withApiKey(inner, '  ')).toBe(inner);
    expect(withApiKey(inner, undefined)).toBe(inner);
  });
});
