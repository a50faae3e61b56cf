import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgentCoreReactConfig, TokenUsage } from '../../src/contracts/schema-types.js';
import type { ModelActor } from '../../src/actors/model.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { runToEnd } from '../support/runToEnd.js';

// The calls that are not a new iteration's — a repair's re-ask and the verifier's call — are model
// calls to the budget (docs/budgets.md): metered, folded into what the run spent, and each checked
// before it is made against its own input's estimate, as the next iteration's call is.

/** A verifier's answer with every check passed. */
const passed = { checks: ['completeness', 'consistency', 'correctness', 'constraints'].map((name) => ({ name, passed: true, basis: `the ${name} check holds` })) };

/** Runs to its end (from `prefix` of a log when given), counting this process's calls of each kind. */
async function run(answers: readonly unknown[], agent: Partial<AgentCoreReactConfig>, verifications: Record<number, unknown> = {}, prefix?: readonly AgentEvent[]) {
  const inner = createScriptedModel(answers, { verifications });
  const calls = { model: 0, verifier: 0 };
  const model: ModelActor = {
    kind: inner.kind,
    complete: (request, signal, options) => (request.purpose === 'verification' ? calls.verifier++ : calls.model++, inner.complete(request, signal, options)),
  };
  const actors = serveActors({ model, tools: [countingTool().tool] });
  try {
    const env = { ...actors, agent: agentConfig(agent), store: createMemoryEventStore(), clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1) };
    return { ...(await runToEnd(env, prefix)), calls };
  } finally {
    await actors.close();
  }
}

/** Each metered call's usage, in the order the log has them. */
function usagesOf(events: readonly AgentEvent[]): TokenUsage[] {
  return events.flatMap((e) => ((e.type === 'model.answered' || e.type === 'verification.completed') && e.data.usage !== undefined ? [e.data.usage] : []));
}

/** Every call's estimated input fitted what was left of `maxTokens` when it was made. */
function expectEveryCallFitted(events: readonly AgentEvent[], maxTokens: number): void {
  let spent = 0;
  for (const usage of usagesOf(events)) {
    expect(spent + usage.promptTokens).toBeLessThanOrEqual(maxTokens);
    spent += usage.totalTokens;
  }
  expect(fold(events).observability.usage?.totalTokens ?? 0).toBe(spent);
}

const ending = (o: { status: string; reason?: string; error?: { code: string } }) => ({ status: o.status, reason: o.reason, code: o.error?.code });

describe("the verifier's call, to a budget", () => {
  it("should meter the verifier's answer like a model call's and fold it into what the run spent", async () => {
    const { outcome, events, calls } = await run([answer.final('A-1 shipped')], { verification: 'self', budget: {} }, { 1: passed });
    expect(outcome).toMatchObject({ status: 'done', verification: { passed: true } });
    expect(calls).toEqual({ model: 1, verifier: 1 });
    const verified = events.find((e) => e.type === 'verification.completed');
    const usage = verified?.type === 'verification.completed' ? verified.data.usage : undefined;
    // The scripted verifier reports nothing: the tokenizer counts its request and its answer.
    expect(usage).toMatchObject({ estimated: true });
    expect(usage?.promptTokens).toBeGreaterThan(0);
    const answered = events.find((e) => e.type === 'model.answered');
    const modelTokens = answered?.type === 'model.answered' ? (answered.data.usage?.totalTokens ?? 0) : 0;
    expect(fold(events).observability.usage?.totalTokens).toBe(modelTokens + (usage?.totalTokens ?? 0));
  });

  it("should never make a verifier call whose estimated input does not fit, and keep the answer unverified when it refuses one", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 200, max: 2_500 }), fc.integer({ min: 0, max: 400 }), async (maxTokens, padding) => {
        const answers = [answer.tool('echo', { text: 'x'.repeat(padding) }), answer.final(`A-1 shipped ${'y'.repeat(padding)}`)];
        const { outcome, events, calls } = await run(answers, { verification: 'self', budget: { maxTokens } }, { 2: passed });
        expectEveryCallFitted(events, maxTokens);
        const got = { ...ending(outcome), verified: outcome.verification?.passed, keepsAnswer: String(outcome.answer ?? '').includes('A-1 shipped') };
        // Verified when the verifier's call fitted; else, once the final answer came, kept unverified;
        // else stopped before it, as a budget stops a run.
        const expected =
          calls.verifier === 1
            ? { status: 'done', reason: 'final_answer', code: undefined, verified: true, keepsAnswer: true }
            : calls.model === 2
              ? { status: 'done_partial', reason: 'budget_exhausted', code: ErrorCode.BUDGET_EXHAUSTED, verified: undefined, keepsAnswer: true }
              : { status: got.status, reason: 'budget_exhausted', code: ErrorCode.BUDGET_EXHAUSTED, verified: undefined, keepsAnswer: false };
        expect(got).toEqual(expected);
      }),
      { numRuns: 25 },
    );
  });

  it("should keep a final answer unverified when only the verifier's call would overspend", async () => {
    const answers = [answer.final(`A-1 shipped ${'y'.repeat(300)}`)];
    // A budget the answer fits and the verifier's request (the answer and the task again) does not.
    const { outcome, calls } = await run(answers, { verification: 'self', budget: { maxTokens: 560 } }, { 1: passed });
    expect(calls).toEqual({ model: 1, verifier: 0 });
    expect(ending(outcome)).toEqual({ status: 'done_partial', reason: 'budget_exhausted', code: ErrorCode.BUDGET_EXHAUSTED });
    expect(outcome.answer).toContain('A-1 shipped');
  });
});

describe("an answer repair's re-ask, to a budget", () => {
  it('should never make a re-ask whose estimated input does not fit what is left, whatever the limit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 200, max: 3_000 }), fc.integer({ min: 0, max: 600 }), async (maxTokens, padding) => {
        // A model that answers with no JSON, longer with each padding, for as long as it is let.
        const answers = [...Array.from({ length: 4 }, (_, n) => `not json ${n} ${'z'.repeat(padding)}`), answer.final('done')];
        const { outcome, events } = await run(answers, { maxIterations: 6, onInvalidAnswer: { repair: 4 }, budget: { maxTokens } });
        expectEveryCallFitted(events, maxTokens);
        const rejected = events.filter((e) => e.type === 'answer.rejected').length;
        const reAsks = events.filter((e) => e.type === 'model.requested').length - 1;
        // Every rejection is followed by its re-ask unless the budget refused it, which ends the run there.
        const refused = rejected > reAsks;
        const budgetEnding = { status: 'blocked', reason: 'budget_exhausted', code: ErrorCode.BUDGET_EXHAUSTED };
        expect({ refused, ending: refused ? ending(outcome) : undefined }).toEqual({ refused, ending: refused ? budgetEnding : undefined });
      }),
      { numRuns: 25 },
    );
  });

  it('should reach the same ending when killed after any event and resumed, and make no call a fresh run would not', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 200, max: 2_000 }), fc.integer({ min: 0, max: 400 }), async (maxTokens, padding) => {
        const answers = [`not json ${'z'.repeat(padding)}`, `still not ${'z'.repeat(padding)}`, answer.final('done')];
        const agent = { maxIterations: 4, onInvalidAnswer: { repair: 2 }, budget: { maxTokens } };
        const reference = await run(answers, agent);
        for (let cut = 1; cut < reference.events.length; cut++) {
          const prefix = reference.events.slice(0, cut);
          const resumed = await run(answers, agent, {}, prefix);
          expect(ending(resumed.outcome), `killed after event ${cut} (${prefix.at(-1)?.type})`).toEqual(ending(reference.outcome));
          const answeredIn = prefix.filter((e) => e.type === 'model.answered').length;
          expect(answeredIn + resumed.calls.model, `killed after event ${cut}`).toBe(reference.calls.model);
        }
      }),
      { numRuns: 8 },
    );
  });
});
