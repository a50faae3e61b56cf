import { describe, expect, it } from 'vitest';
import { fold } from '../../src/events/evolve.js';
import { agentConfig, answer, countingTool, runScripted } from '../support/harness.js';

describe('the timeline line of a failed tool call', () => {
  it('should carry the tool error’s code on the tool line, and no code on a call that succeeded', async () => {
    const failing = countingTool('boom', () => {
      throw new Error('the service is down');
    });
    const { result, events } = await runScripted({
      answers: [answer.tool('boom', {}, 0.6), answer.tool('echo', { text: 'hi' }, 0.7), answer.final('done')],
      tools: [failing.tool, countingTool().tool],
      agent: agentConfig({ allowedTools: ['boom', 'echo'] }),
    });
    const steps = fold(events).observability.events;
    expect(steps).toEqual([
      expect.objectContaining({ iteration: 1, action: 'tool', tool: 'boom', confidence: 0.6, code: 'TOOL_FAILED' }),
      expect.objectContaining({ iteration: 2, action: 'tool', tool: 'echo', confidence: 0.7 }),
      expect.objectContaining({ iteration: 3, action: 'final' }),
    ]);
    expect(steps[1]).not.toHaveProperty('code');
    // The live envelope is the same fold.
    expect(result.envelope.observability.events).toEqual(steps);
  });
});
