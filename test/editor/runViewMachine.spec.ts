import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, waitFor, type EventObject } from 'xstate';
import type { RunViewEvent } from '../../src/editor/run/runViewMachine.js';
import { RunViewState, runViewMachine } from '../../src/editor/run/runViewMachine.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import type { RunResponse } from '../../src/server/apiTypes.js';
import { runScripted } from '../support/harness.js';

async function someEvents(): Promise<AgentEvent[]> {
  const { events } = await runScripted({ answers: [{ action: 'final', message: 'ok', confidence: 1 }] });
  return events;
}

describe('the run view machine', () => {
  it('should go idle → starting → streaming → finished, keeping each streamed event once', async () => {
    const events = await someEvents();
    const aborted: string[] = [];
    let push: ((event: RunViewEvent) => void) | undefined;
    const actor = createActor(
      runViewMachine.provide({
        actors: {
          startRun: fromPromise(async ({ input }: { input: { flowId: string; input: unknown } }) => ({ traceId: `t-${input.flowId}` })),
          followRun: fromCallback<EventObject, { traceId: string }>(({ sendBack }) => {
            push = sendBack;
          }),
          abortRun: fromPromise(async ({ input }: { input: { traceId: string } }) => {
            aborted.push(input.traceId);
          }),
        },
      }),
    ).start();
    expect(actor.getSnapshot().value).toBe(RunViewState.Idle);
    actor.send({ type: 'START', flowId: 'demo', input: 'hi' });
    await waitFor(actor, (s) => s.matches(RunViewState.Streaming));
    expect(actor.getSnapshot().context).toMatchObject({ traceId: 't-demo', flowId: 'demo' });
    for (const event of events) push?.({ type: 'EVENT', event });
    push?.({ type: 'EVENT', event: events[0] as AgentEvent });
    actor.send({ type: 'ABORT' });
    await waitFor(actor, () => aborted.length === 1);
    expect(aborted).toEqual(['t-demo']);
    push?.({ type: 'END', run: undefined });
    const done = actor.getSnapshot();
    expect(done.value).toBe(RunViewState.Finished);
    expect(done.context.events).toHaveLength(events.length);
    actor.send({ type: 'SCRUB', position: 1 });
    expect(actor.getSnapshot().context.position).toBe(1);
  });

  it('should follow a run opened while still under way, from what is logged so far, each event once', async () => {
    const events = await someEvents();
    const logged = events.slice(0, 2);
    let push: ((event: RunViewEvent) => void) | undefined;
    const actor = createActor(
      runViewMachine.provide({
        actors: {
          loadRun: fromPromise(
            async ({ input }: { input: { traceId: string } }): Promise<{ events: readonly AgentEvent[]; run: RunResponse | undefined }> => ({
              events: logged,
              run: { traceId: input.traceId, status: 'running' } as RunResponse,
            }),
          ),
          followRun: fromCallback<EventObject, { traceId: string }>(({ sendBack }) => {
            push = sendBack;
          }),
        },
      }),
    ).start();
    actor.send({ type: 'OPEN', traceId: 'trace-1' });
    await waitFor(actor, (s) => s.matches(RunViewState.Streaming));
    expect(actor.getSnapshot().context).toMatchObject({ traceId: 'trace-1', events: logged, position: undefined });
    // The stream starts from the beginning: what was loaded is not added twice.
    for (const event of events) push?.({ type: 'EVENT', event });
    push?.({ type: 'END', run: { traceId: 'trace-1', status: 'finished' } as RunResponse });
    expect(actor.getSnapshot().value).toBe(RunViewState.Finished);
    expect(actor.getSnapshot().context.events).toEqual(events);
  });

  it('should open a finished run at its last event, and fail with the reason when it cannot', async () => {
    const events = await someEvents();
    const actor = createActor(
      runViewMachine.provide({
        actors: {
          loadRun: fromPromise(async ({ input }: { input: { traceId: string } }): Promise<{ events: readonly AgentEvent[]; run: RunResponse | undefined }> => {
            if (input.traceId === 'missing') throw new Error('RUN_NOT_FOUND: no run missing');
            return { events, run: { traceId: input.traceId } as RunResponse };
          }),
        },
      }),
    ).start();
    actor.send({ type: 'OPEN', traceId: 'trace-1' });
    await waitFor(actor, (s) => s.matches(RunViewState.Replay));
    expect(actor.getSnapshot().context.position).toBe(events.length - 1);
    actor.send({ type: 'SCRUB', position: 0 });
    expect(actor.getSnapshot().context.position).toBe(0);
    actor.send({ type: 'OPEN', traceId: 'missing' });
    await waitFor(actor, (s) => s.matches(RunViewState.Failed));
    expect(actor.getSnapshot().context.problem).toContain('RUN_NOT_FOUND');
    actor.send({ type: 'CLOSE' });
    expect(actor.getSnapshot().value).toBe(RunViewState.Idle);
  });
});
