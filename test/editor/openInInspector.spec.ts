import type { StatelyInspectionEvent, createBrowserInspector } from '@statelyai/inspect';
import { describe, expect, it } from 'vitest';
import { openRunInInspector } from '../../src/editor/inspector/openInInspector.js';
import { runScripted } from '../support/harness.js';

describe('Open in Stately inspector', () => {
  it('should replay the run: the REACT actor with its definition, then event and snapshot per step', async () => {
    const { events } = await runScripted({
      answers: [
        { action: 'tool', tool: 'echo', input: { text: 'a' }, confidence: 0.5 },
        { action: 'final', message: 'done', confidence: 1 },
      ],
    });
    const sent: StatelyInspectionEvent[] = [];
    let options: unknown;
    const fake = ((given: unknown) => {
      options = given;
      return { adapter: { send: (message: StatelyInspectionEvent) => sent.push(message) } };
    }) as unknown as typeof createBrowserInspector;

    openRunInInspector(events, fake);
    expect(options).toEqual({ autoStart: true });
    expect(sent).toHaveLength(1 + 2 * events.length);
    const [actor, ...steps] = sent;
    expect(actor).toMatchObject({ type: '@xstate.actor', name: 'react', sessionId: 'trace-1' });
    expect(JSON.parse((actor as { definition: string }).definition)).toMatchObject({ id: 'react', initial: 'starting' });
    expect(steps.map((m) => m.type)).toEqual(events.flatMap(() => ['@xstate.event', '@xstate.snapshot']));
    const last = steps.at(-1) as { snapshot: { value: string; status: string } };
    expect(last.snapshot).toMatchObject({ value: 'done', status: 'done' });
  });
});
