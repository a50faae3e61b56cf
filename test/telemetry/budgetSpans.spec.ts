import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiChatModel } from '../../src/actors/models/openAiChatModel.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { startFakeChatCompletionsServer, stopFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { enableMemoryOtel, onlySpan, type MemoryOtel } from './otelSupport.js';

// A budgeted run's spend on its spans: the run span's total cost, each model.answered event's own,
// and whether the counts are the tokenizer's. The model is OpenAI's provider against a local
// server speaking Chat Completions.

let server: FakeChatServer;
let otel: MemoryOtel | undefined;
beforeAll(async () => {
  server = await startFakeChatCompletionsServer();
});
afterAll(() => stopFakeChatCompletionsServer(server));
afterEach(async () => {
  await otel?.shutdown();
  otel = undefined;
  server.reset();
});

async function run(traceId: string, usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null) {
  server.enqueue(
    { kind: 'completion', content: JSON.stringify(answer.tool('echo', { text: 'hi' })), usage },
    { kind: 'completion', content: JSON.stringify(answer.final('done')), usage },
  );
  const actors = serveActors({
    model: createOpenAiChatModel({ baseUrl: server.baseUrl, model: 'gpt-4o-mini', timeoutMs: 5000, maxRetries: 0 }),
    tools: [countingTool('echo').tool],
  });
  try {
    const handle = startRun({ ...actors, agent: agentConfig({ budget: { maxTokens: 100_000 } }), store: createMemoryEventStore(), input: 'hi', traceId, flow: { id: 'budgeted' } });
    return await handle.result;
  } finally {
    await actors.close();
  }
}

describe('telemetry of a budgeted run', () => {
  it('should put the run cost on its span and each call cost on its model.answered event', async () => {
    otel = await enableMemoryOtel();
    const result = await run('otel-budget-1', { prompt_tokens: 1_000, completion_tokens: 100, total_tokens: 1_100 });
    expect(result.outcome.status).toBe('done');

    const invoke = onlySpan(otel.spans(), 'invoke_agent budgeted');
    // gpt-4o-mini by the shipped prices: $0.15 in, $0.60 out per million; two calls of 1000 in, 100 out.
    expect(invoke.attributes['redflow.usage.cost_usd']).toBeCloseTo(2 * 0.00021, 12);
    expect(invoke.attributes).not.toHaveProperty('redflow.usage.estimated');
    const answered = invoke.events.filter((event) => event.name === 'model.answered');
    expect(answered.map((event) => event.attributes?.['redflow.usage.cost_usd'])).toEqual([expect.closeTo(0.00021, 12), expect.closeTo(0.00021, 12)]);
  });

  it('should say on the run span when the counts are the tokenizer estimate', async () => {
    otel = await enableMemoryOtel();
    const result = await run('otel-budget-2', null);
    expect(result.outcome.status).toBe('done');

    const invoke = onlySpan(otel.spans(), 'invoke_agent budgeted');
    expect(invoke.attributes['redflow.usage.estimated']).toBe(true);
    expect(invoke.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(invoke.attributes['redflow.usage.cost_usd']).toBeGreaterThan(0);
  });
});
