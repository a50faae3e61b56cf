import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AgentCoreReactConfig } from '../../src/contracts/schema-types.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { logStatus } from '../../src/events/resumePoint.js';
import { runSteps } from '../../src/machines/runSteps.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { runToEnd } from '../support/runToEnd.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

const CHECKS = ['completeness', 'consistency', 'correctness', 'constraints'] as const;

/** What a verifier may answer: the four checks, each passed or failed, or something that is not the shape. */
const anyVerification = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }).map((passed) => ({ checks: CHECKS.map((name, i) => ({ name, passed: passed[i], basis: `${name} rests on the observation` })) })) },
  { weight: 1, arbitrary: fc.constantFrom('all good', '{"checks":[]}', '{"checks":[{"name":"completeness","passed":true,"basis":""}]}') },
);

/** Answers a model might give a verifying agent: mostly final answers (each verified), some tool calls. */
const anyAnswer = fc.oneof(
  { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 8 }).map((text) => answer.final(`answer ${text}`)) },
  { weight: 2, arbitrary: fc.string({ maxLength: 5 }).map((text) => answer.tool('echo', { text }, 0.3)) },
);

const anyAgent = fc
  .record({ maxIterations: fc.integer({ min: 1, max: 5 }), maxFailures: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }), self: fc.boolean() })
  .map(({ maxIterations, maxFailures, self }): Partial<AgentCoreReactConfig> => ({
    maxIterations,
    verification: self || maxFailures === undefined ? 'self' : { maxFailures, rubric: 'Say which order.' },
  }));

/** Runs to its end, from `prefix` of a log when given: the outcome, the log, and the live envelope checked against its fold. */
async function run(answers: readonly unknown[], verifications: Record<number, unknown>, agent: Partial<AgentCoreReactConfig>, prefix?: readonly AgentEvent[]) {
  const actors = serveActors({ model: createScriptedModel(answers, { verifications }), tools: [countingTool().tool] });
  const store = createMemoryEventStore();
  const env = { ...actors, agent: agentConfig(agent), store, clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1) };
  try {
    const { outcome, events } = await runToEnd({ ...env, store }, prefix);
    return { outcome, events };
  } finally {
    await actors.close();
  }
}

const types = (events: readonly AgentEvent[]) => events.filter((event) => event.type !== 'run.resumed').map((event) => event.type);

describe('a run with verification, killed at any event', () => {
  it('should replay to its outcome and resume from every prefix of its log to the same outcome and the same steps', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyAnswer, { minLength: 5, maxLength: 5 }), fc.array(anyVerification, { minLength: 5, maxLength: 5 }), anyAgent, async (answers, verdicts, agent) => {
        const verifications = Object.fromEntries(verdicts.map((verdict, i) => [i + 1, verdict]));
        const reference = await run(answers, verifications, agent);
        // Replay: the log alone gives the outcome, and the steps end where the run ended.
        const status = logStatus(reference.events);
        expect(status.kind === 'finished' && status.outcome).toEqual(reference.outcome);
        expect(['done', 'error']).toContain(runSteps(reference.events).at(-1)?.state);
        for (let cut = 1; cut < reference.events.length; cut++) {
          const resumed = await run(answers, verifications, agent, reference.events.slice(0, cut));
          expect(resumed.outcome, `cut at ${cut}`).toEqual(reference.outcome);
          expect(types(resumed.events), `cut at ${cut}`).toEqual(types(reference.events));
        }
      }),
      { numRuns: 25 },
    );
  });
});
