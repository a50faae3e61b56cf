import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelActor } from '../../src/actors/model.js';
import { validators } from '../../src/contracts/schemas.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { parseReactStepRequest } from '../../src/stepService/parseReactStepRequest.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import type { ReactStepRequest } from '../../src/stepService/reactStepTypes.js';

// A step-service session's budget (`session_budget`): each query's run gets what the earlier
// queries left, folded from their logs, and the answers say what each query spent.

/** A hosted model's stand-in that answers finally, reporting `tokens` of usage per call. */
function reportingModel(tokens: number) {
  let calls = 0;
  const model = (): Promise<ModelActor> =>
    Promise.resolve({
      kind: 'reporting',
      model: 'gpt-4o',
      complete: async () => {
        calls += 1;
        const usage = { promptTokens: tokens - 100, completionTokens: 100, totalTokens: tokens };
        return { text: JSON.stringify({ action: 'final', message: `answer ${calls}`, thought: 'I know this.', confidence: 0.9 }), attempts: 1, usage };
      },
    });
  return { model, calls: () => calls };
}

let runsDir: string;
beforeEach(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'redflow-session-budget-'));
});
afterEach(async () => {
  await rm(runsDir, { recursive: true, force: true });
});

const query = (user_query: string, conversation_history: ReactStepRequest['conversation_history'], session_budget: ReactStepRequest['session_budget']): ReactStepRequest => ({
  session_id: 'sess-b',
  user_query,
  conversation_history,
  available_tools_prompt_segment: 'You have access to: code_search(query)',
  llm_config: { modelName: 'gpt-4o' },
  ...(session_budget !== undefined && { session_budget }),
});

describe('a step-service session with a budget', () => {
  it("should give each query's run what the earlier queries left, and say what each spent", async () => {
    const { model, calls } = reportingModel(4_800);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });

    const one = await service.step(query('What is auth?', [], { maxTokens: 5_000, maxCost: 1 }));
    expect(validators.reactStepResponse(one), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
    expect(one).toMatchObject({ status: 'direct_response_provided', direct_response: 'answer 1' });
    // gpt-4o by the shipped prices: $2.50 in, $10 out per million tokens.
    expect(one.usage).toEqual({ promptTokens: 4_700, completionTokens: 100, totalTokens: 4_800, costUsd: expect.closeTo(0.01275, 12) });

    const two = await service.step(query('And logout?', one.updated_conversation_history, { maxTokens: 5_000, maxCost: 1 }));
    expect(validators.reactStepResponse(two), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
    // 200 tokens left: the second query's prompt alone is more, so its run asks nothing.
    expect(two.status).toBe('error');
    expect(two.error?.code).toBe('BUDGET_EXHAUSTED');
    expect(calls()).toBe(1);
    const { events } = await readJsonlLog(path.join(runsDir, 'sess-b-q2.jsonl'));
    const started = events[0] as { type: string; data: { agent: { budget?: unknown } } };
    expect(started.type).toBe('run.started');
    expect(started.data.agent.budget).toEqual({ maxTokens: 200, maxCost: expect.closeTo(1 - 0.01275, 12) });
  });

  it('should answer a query of a session with nothing left with BUDGET_EXHAUSTED, starting no run', async () => {
    const { model, calls } = reportingModel(5_000);
    const service = createStepService({ logs: jsonlStepLogs(runsDir), models: new Map([['gpt-4o', model]]) });
    const one = await service.step(query('What is auth?', [], { maxTokens: 5_000 }));

    const two = await service.step(query('And logout?', one.updated_conversation_history, { maxTokens: 5_000 }));

    expect(validators.reactStepResponse(two), JSON.stringify(validators.reactStepResponse.errors)).toBe(true);
    expect(two).toMatchObject({ status: 'error', error: { code: 'BUDGET_EXHAUSTED' } });
    expect(two.error?.message).toContain('spent 5000 tokens');
    expect(calls()).toBe(1);
    expect(await readdir(runsDir)).toEqual(['sess-b-q1.jsonl']);
  });

  it.each([
    ['a negative token limit', { maxTokens: -1 }, '/session_budget/maxTokens'],
    ['a cost that is not a number', { maxCost: 'a lot' }, '/session_budget/maxCost'],
  ])('should refuse %s with HTTP_BODY_INVALID naming the field', (_, session_budget, field) => {
    const body = { ...query('What is auth?', [], undefined), session_budget };
    expect(() => parseReactStepRequest(body)).toThrow(expect.objectContaining({ code: 'HTTP_BODY_INVALID', path: field }) as Error);
  });

  it('should take a session budget that is one', () => {
    expect(parseReactStepRequest(query('What is auth?', [], { maxTokens: 5_000, maxCost: 0.5 })).session_budget).toEqual({ maxTokens: 5_000, maxCost: 0.5 });
  });
});
