import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { durationText } from '../../src/editor/panels/WaitFacts.js';
import { runViewAt } from '../../src/editor/run/runView.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { runSteps } from '../../src/machines/runSteps.js';
import { answerWaitingRun, settleRun } from '../../src/host/answerWaitingRun.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

const QUESTION = 'Which order do you mean?';

describe('the wait in the run view', () => {
  it('should say what the run waits for at a position, since when and until when, and nothing once answered', async () => {
    const actors = serveActors({
      model: createScriptedModel([{ action: 'request_info', input: { question: QUESTION } }, answer.final('A-1001 ships tomorrow')]),
      tools: [countingTool().tool],
    });
    const store = createMemoryEventStore();
    const env = { ...actors, agent: agentConfig({ waitTimeoutMs: 60_000 }), store, clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1) };
    try {
      const parked = await settleRun(startRun({ ...env, input: 'where is my order?', traceId: 'w-1' }));
      expect(parked.kind).toBe('waiting');
      const waiting = runViewAt(runSteps((await store.read('w-1')).events));
      expect(waiting.wait).toMatchObject({ kind: 'human', question: { action: 'request_info', question: QUESTION }, iteration: 1, timeoutMs: 60_000 });
      expect(Date.parse(waiting.wait?.deadline ?? '') - Date.parse(waiting.wait?.since ?? '')).toBe(60_000);

      await settleRun(await answerWaitingRun({ ...env, traceId: 'w-1', answer: { kind: 'human', text: 'A-1001' } }));
      const steps = runSteps((await store.read('w-1')).events);
      expect(runViewAt(steps).wait).toBeUndefined();
      // Scrubbed back to the question, the view waits again.
      const asked = steps.findIndex((step) => step.event.type === 'human.requested');
      expect(runViewAt(steps, asked).wait?.kind).toBe('human');
      expect(runViewAt(steps, asked - 1).wait).toBeUndefined();
    } finally {
      await actors.close();
    }
  });

  it('should give durations in words, to the minute', () => {
    expect(durationText(-5)).toBe('0 s');
    expect(durationText(42_400)).toBe('42 s');
    expect(durationText(59 * 60_000 + 59_000)).toBe('59 min');
    expect(durationText(26 * 3_600_000 + 5 * 60_000)).toBe('26 h 5 min');
    expect(durationText(3 * 86_400_000 + 2 * 3_600_000)).toBe('3 d 2 h');
  });
});
