import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../src/contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { fold } from '../../src/events/evolve.js';
import { DEFAULT_MODEL_PRICES, priceIn, runBudgetFor } from '../../src/runtime/runBudgetFor.js';
import { terminateReasonOf } from '../../src/agents/terminateReason.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { agentConfig, answer, countingTool, runScripted } from '../support/harness.js';
import { runToEnd } from '../support/runToEnd.js';

// The budget guards of the pure statechart, fed by the usage folded from the log, and the budget's
// config as a run built in code (no schema check on the way) gets it.

describe('a run with a budget, in the statechart', () => {
  it('should never make a call whose estimated input does not fit what is left, whatever the limit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 200, max: 4_000 }), fc.integer({ min: 0, max: 300 }), async (maxTokens, padding) => {
        // A model that calls tools with answers of any length, for as long as it is let.
        const answers = Array.from({ length: 20 }, (_, n) => ({ ...answer.tool('echo', { text: 'x'.repeat(padding) }), message: `step ${n}` }));
        const { result, events, modelCalls } = await runScripted({ answers, agent: agentConfig({ maxIterations: 20, budget: { maxTokens } }), tools: [countingTool().tool] });

        const usages = events.filter((e) => e.type === 'model.answered').map((e) => (e.data as { usage: TokenUsage }).usage);
        expect(usages).toHaveLength(modelCalls);
        let spent = 0;
        for (const usage of usages) {
          // The scripted model reports nothing: every count is the tokenizer's.
          expect(usage.estimated).toBe(true);
          expect(spent + usage.promptTokens).toBeLessThanOrEqual(maxTokens);
          spent += usage.totalTokens;
        }
        // What the run says it spent is the fold of its log.
        expect(fold(events).observability.usage?.totalTokens ?? 0).toBe(spent);
        const toolRan = events.some((e) => e.type === 'tool.completed');
        // With a tool's result to show, the run ends with it; a tool call that came past the budget is not made.
        const expected =
          modelCalls === 20
            ? { reason: 'iteration_limit', status: 'escalate', code: ErrorCode.ITERATION_OVERFLOW }
            : { reason: 'budget_exhausted', status: toolRan ? 'done_partial' : 'blocked', code: ErrorCode.BUDGET_EXHAUSTED };
        expect({ reason: result.outcome.reason, status: result.outcome.status, code: result.outcome.error?.code }).toEqual(expected);
      }),
      { numRuns: 25 },
    );
  });

  it('should reach the same ending when killed after any event and resumed, and make no call a fresh run would not', async () => {
    /** Runs to its end (from `prefix` of its log when given), counting the model calls this process makes. */
    async function run(answers: readonly unknown[], maxTokens: number, prefix?: readonly AgentEvent[]) {
      const inner = createScriptedModel(answers);
      let calls = 0;
      const model = { kind: inner.kind, complete: (...args: Parameters<typeof inner.complete>) => (calls++, inner.complete(...args)) };
      const actors = serveActors({ model, tools: [countingTool().tool] });
      try {
        const env = { ...actors, agent: agentConfig({ maxIterations: 6, budget: { maxTokens } }), store: createMemoryEventStore(), clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1) };
        return { ...(await runToEnd(env, prefix)), calls };
      } finally {
        await actors.close();
      }
    }
    const answeredIn = (events: readonly AgentEvent[]) => events.filter((e) => e.type === 'model.answered').length;
    await fc.assert(
      // From a budget the first call's input alone overspends (about 250 tokens) to one the run never reaches.
      fc.asyncProperty(fc.integer({ min: 20, max: 3_000 }), fc.integer({ min: 0, max: 200 }), async (maxTokens, padding) => {
        const answers = [...Array.from({ length: 5 }, () => answer.tool('echo', { text: 'x'.repeat(padding) })), answer.final('done')];
        const reference = await run(answers, maxTokens);
        for (let cut = 1; cut < reference.events.length; cut++) {
          const prefix = reference.events.slice(0, cut);
          // The scripted model answers by iteration, so the resumed run is given what the first one was.
          const resumed = await run(answers, maxTokens, prefix);
          const ending = (o: typeof reference.outcome) => ({ status: o.status, reason: o.reason, code: o.error?.code });
          expect(ending(resumed.outcome), `killed after event ${cut} (${prefix.at(-1)?.type})`).toEqual(ending(reference.outcome));
          expect(answeredIn(prefix) + resumed.calls, `killed after event ${cut}`).toBe(reference.calls);
        }
      }),
      { numRuns: 15 },
    );
  });

  it('should leave a run without a budget unmetered: no estimate, no cost', async () => {
    const { events } = await runScripted({ answers: [answer.final('hi')] });
    expect(events.find((e) => e.type === 'model.answered')?.data).not.toHaveProperty('usage');
  });
});

describe("a budget's ending in an agent definition's words", () => {
  it('should be partial with a tool result to show, and an error without', () => {
    expect(terminateReasonOf({ status: 'done_partial', reason: 'budget_exhausted' })).toBe('partial');
    expect(terminateReasonOf({ status: 'blocked', reason: 'budget_exhausted' })).toBe('error');
  });
});

describe('the fold of usages', () => {
  it('should sum tokens and costs, and say estimated when any call was', () => {
    const usage = fc.record(
      {
        promptTokens: fc.nat(10_000),
        completionTokens: fc.nat(10_000),
        estimated: fc.constant(true as const),
        costUsd: fc.double({ min: 0, max: 1, noNaN: true }),
      },
      { requiredKeys: ['promptTokens', 'completionTokens'] },
    );
    fc.assert(
      fc.property(fc.array(usage, { minLength: 1, maxLength: 12 }), (usages) => {
        const events = usages.map((u) => ({
          type: 'model.answered' as const,
          iteration: 1,
          data: { text: '{}', durationMs: 0, usage: { ...u, totalTokens: u.promptTokens + u.completionTokens } },
        }));
        const total = fold(events, 'trace-1').observability.usage;
        expect(total?.promptTokens).toBe(usages.reduce((sum, u) => sum + u.promptTokens, 0));
        expect(total?.totalTokens).toBe(usages.reduce((sum, u) => sum + u.promptTokens + u.completionTokens, 0));
        expect(total?.estimated).toBe(usages.some((u) => u.estimated === true) ? true : undefined);
        const costs = usages.filter((u) => u.costUsd !== undefined);
        const cost = costs.length === 0 ? undefined : costs.reduce((sum, u) => sum + (u.costUsd ?? 0), 0);
        expect(total?.costUsd === undefined ? undefined : Math.round(total.costUsd * 1e9)).toBe(cost === undefined ? undefined : Math.round(cost * 1e9));
      }),
    );
  });
});

describe('a budget built in code', () => {
  it.each([
    ['maxTokens', { maxTokens: -1 }],
    ['maxTokens', { maxTokens: 1.5 }],
    ['maxTokens', { maxTokens: Number.NaN }],
    ['maxCost', { maxCost: -0.5 }],
    ['maxCost', { maxCost: '1' }],
    ['budget.prices', { prices: { 'gpt-4o': { input: -1, output: 1 } } }],
  ])('should refuse a bad %s with BUDGET_CONFIG_INVALID', async (field, budget) => {
    const error = await runBudgetFor({ budget: budget as never }, 'gpt-4o').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).code).toBe(ErrorCode.BUDGET_CONFIG_INVALID);
    expect((error as RedflowError).message).toContain(field);
  });

  it('should be absent when the agent sets none, and count with the model family tokenizer when it does', async () => {
    expect(await runBudgetFor({}, 'gpt-4o')).toBeUndefined();
    const budget = await runBudgetFor({ budget: { maxTokens: 100 } }, 'gpt-4o');
    expect(budget?.countTokens('How is authentication implemented?')).toBe(countTokens('How is authentication implemented?'));
  });

  it('should price a dated model name by its longest listed prefix, and take the agent prices first', async () => {
    expect(priceIn(DEFAULT_MODEL_PRICES, 'gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(priceIn(DEFAULT_MODEL_PRICES, 'openai/gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10 });
    expect(priceIn(DEFAULT_MODEL_PRICES, 'llama3.1')).toBeUndefined();
    const budget = await runBudgetFor({ budget: { prices: { 'gpt-4o-mini': { input: 1, output: 2 }, 'llama3.1': { input: 0, output: 0 } } } }, 'gpt-4o-mini');
    expect(budget?.priceOf('gpt-4o-mini-2024-07-18')).toEqual({ input: 1, output: 2 });
    expect(budget?.priceOf('gpt-4o')).toEqual({ input: 2.5, output: 10 });
    expect(budget?.priceOf('llama3.1:8b')).toEqual({ input: 0, output: 0 });
  });
});
