import { afterEach, describe, expect, it } from 'vitest';
import { setActiveTelemetry } from '../../src/telemetry/activeTelemetry.js';
import type { Telemetry } from '../../src/telemetry/telemetry.js';
import { answer, countingTool, runScripted } from '../support/harness.js';

// Telemetry never fails a run: a telemetry whose every part throws costs the spans, not the run.

const fail = (): never => {
  throw new Error('telemetry is broken');
};

afterEach(() => setActiveTelemetry(undefined));

describe('a broken telemetry', () => {
  it('should leave runs and their model and tool calls as they would be without it', async () => {
    const broken: Telemetry = { startRun: fail, modelCall: fail, toolCall: fail };
    const { tool, calls } = countingTool();
    setActiveTelemetry(broken);
    const { result, events } = await runScripted({ answers: [answer.tool('echo', { text: 'a' }), answer.final('done')], tools: [tool] });
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'done' });
    expect(calls).toEqual([{ text: 'a' }]);
    expect(events.at(-1)?.type).toBe('run.completed');
  });

  it('should leave runs as they are when the run telemetry fails while the run goes on', async () => {
    const { tool } = countingTool();
    setActiveTelemetry({
      startRun: () => ({ onEvent: fail, carry: fail, end: fail }),
      modelCall: () => ({ within: (work) => work(), traceparent: undefined, end: fail, fail }),
      toolCall: () => ({
        within: (work) => work(),
        get traceparent(): string {
          return fail();
        },
        end: fail,
        fail,
      }),
    });
    const { result } = await runScripted({ answers: [answer.tool('echo', { text: 'a' }), answer.final('done')], tools: [tool] });
    expect(result.outcome.status).toBe('done');
  });
});
