import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadStepModels } from '../../src/stepService/stepModels.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-step-models-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadStepModels', () => {
  it('tells which models are served on this machine: local providers at their default, any server at a loopback address', async () => {
    const file = path.join(dir, 'models.json');
    await writeFile(
      file,
      JSON.stringify({
        models: {
          ollama: { provider: 'ollama', model: 'llama3.1' },
          vllm: { provider: 'vllm', model: 'qwen', baseUrl: 'http://localhost:8000/v1' },
          compatible: { provider: 'openai-compatible', model: 'm', baseUrl: 'http://[::1]:8080/v1' },
          lan: { provider: 'vllm', model: 'qwen', baseUrl: 'http://10.0.0.7:8000/v1' },
          openai: { provider: 'openai', model: 'gpt-4o' },
          anthropic: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
        },
      }),
    );
    const models = await loadStepModels(file, {});
    const local = [...models].filter(([, build]) => build.servedLocally === true).map(([name]) => name);
    expect(local).toEqual(['ollama', 'vllm', 'compatible']);
  });
});
