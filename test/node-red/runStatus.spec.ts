import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { createInProcessTransport } from '../../src/actors/inProcessTransport.js';
import type { NodeStatus } from '../../src/nodeRed/nodeRedApi.js';
import { endedStatus, runningStatus, toolProgressStatus } from '../../src/nodeRed/runStatus.js';
import { followToolProgress } from '../../src/nodeRed/toolProgress.js';

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

describe("an agent node's status while a tool reports its progress", () => {
  it("shows the call with a percentage of the tool's total, or its count, and its message", () => {
    expect(toolProgressStatus('crawl', 2, { progress: 2, total: 5, message: 'page 2' }, 1)).toEqual({ fill: 'blue', shape: 'dot', text: 'awaitingTool · #2 crawl: 40% page 2' });
    expect(toolProgressStatus('crawl', 1, { progress: 7 }, 1).text).toBe('awaitingTool · #1 crawl: 7');
    expect(toolProgressStatus('remote_agent', 1, { message: 'working:\n  on\tit' }, 2).text).toBe('2 runs · awaitingTool · #1 remote_agent: working: on it');
    expect(toolProgressStatus('crawl', 1, {}, 1).text).toBe('awaitingTool · #1 crawl');
    expect(toolProgressStatus('crawl', 1, { message: 'x'.repeat(200) }, 1).text).toHaveLength(60);
  });

  it('shows what the call in flight reports on the run\'s live subject, and nothing of another call or once it is over', async () => {
    const transport = createInProcessTransport();
    const shown: NodeStatus[] = [];
    const follower = followToolProgress(transport, 'redflow.runs.t-1.live', (status) => shown.push(status), () => 1);
    // Delivered on a microtask, as over NATS it comes later: each report is heard before the next step.
    const report = async (toolCallId: string, progress: Record<string, unknown>) => {
      transport.publish('redflow.runs.t-1.live', { traceId: 't-1', iteration: 1, toolCallId, progress });
      await Promise.resolve();
    };

    await report('call-1', { progress: 1, total: 4 }); // before the call is requested: not this run's to show yet
    follower.seen(event('tool.requested', 1, { tool: 'crawl', idempotencyKey: 'call-1' }));
    await report('call-1', { progress: 1, total: 4, message: 'page 1' });
    await report('call-0', { progress: 3, total: 4 }); // another call's late word
    follower.seen(event('tool.attached', 1, { idempotencyKey: 'call-1', handle: { taskId: 'x' } }));
    await report('call-1', { progress: 2, total: 4 });
    follower.seen(event('tool.completed', 1, { tool: 'crawl', idempotencyKey: 'call-1' }));
    await report('call-1', { progress: 4, total: 4 });
    follower.stop();
    await transport.close();
    expect(shown.map((status) => status.text)).toEqual(['awaitingTool · #1 crawl: 25% page 1', 'awaitingTool · #1 crawl: 50%']);
  });
});
