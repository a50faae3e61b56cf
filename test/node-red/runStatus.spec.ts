import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { endedStatus, runningStatus } from '../../src/nodeRed/runStatus.js';

const event = (type: string, iteration: number, data: Record<string, unknown> = {}) => ({ type, iteration, data }) as unknown as AgentEvent;

describe("an agent node's status", () => {
  it('shows the state after the latest event and the iteration, the tool while it waits on one, and how many runs are under way', () => {
    expect(runningStatus(event('model.requested', 1), 1)).toEqual({ fill: 'blue', shape: 'dot', text: 'awaitingModel · #1' });
    expect(runningStatus(event('tool.requested', 2, { tool: 'lookup_order' }), 1).text).toBe('awaitingTool · #2 lookup_order');
    expect(runningStatus(event('model.answered', 2), 3).text).toBe('3 runs · validating · #2');
    expect(runningStatus(event('tool.requested', 2, { tool: 'x'.repeat(100) }), 1).text).toHaveLength(60);
  });

  it('shows how a run ended: green, a green ring, yellow, or red with the error code', () => {
    expect(endedStatus({ status: 'done', reason: 'final_answer' }, 3)).toEqual({ fill: 'green', shape: 'dot', text: 'done · #3' });
    expect(endedStatus({ status: 'done_partial', reason: 'confidence_threshold' }, 2)).toEqual({ fill: 'green', shape: 'ring', text: 'done_partial · #2' });
    expect(endedStatus({ status: 'escalate', reason: 'iteration_limit' }, 5)).toEqual({ fill: 'yellow', shape: 'dot', text: 'escalate · #5' });
    expect(endedStatus({ status: 'blocked', reason: 'invalid_answer', error: { code: 'INVALID_JSON', message: 'x' } }, 2)).toEqual({
      fill: 'red',
      shape: 'dot',
      text: 'blocked · #2: INVALID_JSON',
    });
  });
});
