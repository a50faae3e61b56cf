import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, waitFor, type EventObject } from 'xstate';
import type { RunChunk } from '../../src/runtime/serveActors.js';
import { afterEvent, shownAnswer, withChunk, type LiveAnswer } from '../../src/editor/run/liveAnswer.js';
import { RunViewState, runViewMachine, type RunViewEvent } from '../../src/editor/run/runViewMachine.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { runScripted } from '../support/harness.js';

const FINAL = '{"action":"final","message":"Order A-1001 ships tomorrow.","confidence":0.9}';

/** A two-iteration run's events: a tool call, then the final answer. */
async function twoIterations(): Promise<AgentEvent[]> {
  const { events } = await runScripted({ answers: [{ action: 'tool', tool: 'echo', input: { text: 'A-1001' }, confidence: 0.8 }, FINAL] });
  return events;
}

const chunk = (iteration: number, attempt: number, text: string): RunChunk => ({ traceId: 't', iteration, attempt, text });

/** The events up to (not including) the answer of `iteration`. */
function beforeAnswer(events: readonly AgentEvent[], iteration: number): AgentEvent[] {
  return events.slice(0, events.findIndex((event) => event.type === 'model.answered' && event.iteration === iteration));
}

describe('the answer as the model writes it', () => {
  it('should join the pieces of a call, whatever their split, into the text', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1 }), { maxLength: 30 }), (parts) => {
        let live: LiveAnswer | undefined;
        for (const part of parts) live = withChunk(live, chunk(1, 1, part), []);
        expect(live?.text ?? '').toBe(parts.join(''));
      }),
    );
  });

  it('should start again on a retry or the next iteration, and ignore pieces of an earlier call', () => {
    let live = withChunk(undefined, chunk(2, 1, 'first try'), []);
    live = withChunk(live, chunk(2, 2, 'second'), []);
    expect(live).toEqual({ iteration: 2, attempt: 2, text: 'second' });
    live = withChunk(live, chunk(2, 1, ' late piece of the first try'), []);
    live = withChunk(live, chunk(1, 1, ' a piece of iteration 1'), []);
    expect(live?.text).toBe('second');
    expect(withChunk(live, chunk(3, 1, 'next'), [])).toEqual({ iteration: 3, attempt: 1, text: 'next' });
  });

  it('should be replaced by the logged answer when model.answered comes, and ignore pieces of an answer already logged', async () => {
    const events = await twoIterations();
    const answered = events.find((event) => event.type === 'model.answered' && event.iteration === 2) as AgentEvent;
    const before = beforeAnswer(events, 2);
    const live = withChunk(undefined, chunk(2, 1, '{"action":"final","mess'), before);
    expect(shownAnswer(live, before)).toEqual({ state: 'writing', iteration: 2, text: '{"action":"final","mess' });
    // An event that does not log the answer leaves the text; the answer replaces it.
    expect(afterEvent(live, before.at(-1) as AgentEvent)).toBe(live);
    expect(afterEvent(live, answered)).toBeUndefined();
    const after = [...before, answered];
    expect(shownAnswer(undefined, after)).toEqual({ state: 'logged', iteration: 2, text: FINAL });
    expect(withChunk(undefined, chunk(2, 1, 'late'), after)).toBeUndefined();
    // Once the model is asked again, the last answer is no longer shown.
    const asked = events.filter((event) => event.type === 'model.requested').at(-1) as AgentEvent;
    expect(shownAnswer(undefined, [...events.slice(0, events.indexOf(asked) + 1)])).toBeUndefined();
  });

  it('should keep the pieces in the run view machine while it follows the run, and drop them on the answer', async () => {
    const events = await twoIterations();
    let push: ((event: RunViewEvent) => void) | undefined;
    const actor = createActor(
      runViewMachine.provide({
        actors: {
          startRun: fromPromise(async () => ({ traceId: 't' })),
          followRun: fromCallback<EventObject, { traceId: string }>(({ sendBack }) => {
            push = sendBack;
          }),
        },
      }),
    ).start();
    actor.send({ type: 'START', flowId: 'demo', input: 'hi' });
    await waitFor(actor, (s) => s.matches(RunViewState.Streaming));
    for (const event of beforeAnswer(events, 2)) push?.({ type: 'EVENT', event });
    push?.({ type: 'CHUNK', chunk: chunk(2, 1, '{"action":') });
    push?.({ type: 'CHUNK', chunk: chunk(2, 1, '"final"') });
    expect(actor.getSnapshot().context.live).toEqual({ iteration: 2, attempt: 1, text: '{"action":"final"' });
    for (const event of events.slice(beforeAnswer(events, 2).length)) push?.({ type: 'EVENT', event });
    expect(actor.getSnapshot().context.live).toBeUndefined();
    push?.({ type: 'END', run: undefined });
    expect(actor.getSnapshot().value).toBe(RunViewState.Finished);
  });
});
