import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

const script = [answer.tool('echo', { text: 'a' }), answer.tool('echo', { text: 'b' }), answer.final('both done')];

async function runFrom(prefix: readonly AgentEvent[] | undefined, answers: readonly unknown[] = script) {
  const echo = countingTool();
  const actors = serveActors({ model: createScriptedModel(answers), tools: [echo.tool] });
  const store = createMemoryEventStore();
  for (const event of prefix ?? []) await store.append(event);
  const environment = { ...actors, agent: agentConfig(), store };
  const run = prefix ? resumeRun({ ...environment, events: prefix }) : startRun({ ...environment, input: 'go', traceId: 't' });
  const result = await run.result;
  const { events } = await store.read('t');
  await actors.close();
  return { result, events, calls: echo.calls };
}

describe('resuming a run from its log', () => {
  it('should reach the same outcome from every event boundary, repeating no completed tool call', async () => {
    const whole = await runFrom(undefined);
    expect(whole.calls).toHaveLength(2);
    for (let cut = 1; cut <= whole.events.length; cut++) {
      const prefix = whole.events.slice(0, cut);
      const resumed = await runFrom(prefix);
      expect(resumed.result.outcome, `cut after event ${cut}`).toEqual(whole.result.outcome);
      const completedBefore = prefix.filter((e) => e.type === 'tool.completed').length;
      expect(resumed.calls, `cut after event ${cut}`).toHaveLength(whole.calls.length - completedBefore);
      expect(fold(resumed.events)).toEqual(resumed.result.envelope);
      // The resumed log is the prefix, then a run.resumed marker, then the rest of the run.
      expect(resumed.events.slice(0, cut)).toEqual(prefix);
      // (A whole log, resumed, gets nothing after it.)
      expect(resumed.events[cut]?.type).toBe(cut < whole.events.length ? 'run.resumed' : undefined);
    }
  });

  it('should re-send a tool request that was logged but not completed with the same idempotency key', async () => {
    const whole = await runFrom(undefined);
    const cut = whole.events.findIndex((e) => e.type === 'tool.requested') + 1;
    const echo = countingTool();
    const keys: string[] = [];
    const tool = { ...echo.tool, execute: (input: Record<string, unknown>, context: { idempotencyKey: string }) => (keys.push(context.idempotencyKey), { input }) };
    const actors = serveActors({ model: createScriptedModel(script), tools: [tool] });
    const store = createMemoryEventStore();
    const prefix = whole.events.slice(0, cut);
    for (const event of prefix) await store.append(event);
    await resumeRun({ ...actors, agent: agentConfig(), store, events: prefix }).result;
    const logged = prefix.at(-1) as Extract<AgentEvent, { type: 'tool.requested' }>;
    expect(keys[0]).toBe(logged.data.idempotencyKey);
    await actors.close();
  });

  it('should return the outcome of a finished run without running anything', async () => {
    const whole = await runFrom(undefined);
    const again = await runFrom(whole.events);
    expect(again.calls).toHaveLength(0);
    expect(again.events).toEqual(whole.events);
    expect(again.result.outcome).toEqual(whole.result.outcome);
  });

  it('should agree with the uninterrupted run for random scripts cut anywhere', async () => {
    const anyAnswer = fc.oneof(
      fc.constant(answer.final('f')),
      fc.constant(answer.tool('echo', { text: 'x' })),
      fc.constant('oops'),
      fc.constant(answer.tool('nope')),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(anyAnswer, { minLength: 1, maxLength: 6 }), fc.nat(), async (answers, at) => {
        const whole = await runFrom(undefined, answers);
        const cut = 1 + (at % whole.events.length);
        const resumed = await runFrom(whole.events.slice(0, cut), answers);
        expect(resumed.result.outcome).toEqual(whole.result.outcome);
        expect(fold(resumed.events)).toEqual(resumed.result.envelope);
      }),
      { numRuns: 100 },
    );
  });
});
