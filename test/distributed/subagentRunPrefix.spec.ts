import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { findRunPrefix, type RunLogLookup } from '../../src/nats/cluster/subagentRunPrefix.js';

/** A subagent call as its caller's log records it. */
const call = (traceId: string, iteration: number, tool: string, childTraceId = `${traceId}-${iteration}`): AgentEvent =>
  ({ traceId, seq: 2 * iteration, type: 'tool.requested', iteration, data: { tool, input: { task: 't' }, idempotencyKey: `${traceId}:${iteration}`, childTraceId } }) as unknown as AgentEvent;

/** Logs by prefix, then by trace id, read as a cluster's trace streams would be. */
function cluster(logs: Record<string, Record<string, AgentEvent[]>>): RunLogLookup & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    exists: async (prefix, traceId) => logs[prefix]?.[traceId] !== undefined,
    read: async (prefix, traceId) => {
      reads.push(`${prefix} ${traceId}`);
      return logs[prefix]?.[traceId] ?? [];
    },
  };
}

describe('findRunPrefix', () => {
  const logs = {
    redflow: { desk: [call('desk', 1, 'research_team'), call('desk', 3, 'writer')], 'desk-7': [] },
    'redflow.agent-research-team': { 'desk-1': [call('desk-1', 2, 'fact_checker')] },
    'redflow.agent-research-team.agent-fact-checker': { 'desk-1-2': [] },
    'redflow.agent-writer': {},
  };

  it('should find a run of the prefix itself without reading any log', async () => {
    const lookup = cluster(logs);
    expect(await findRunPrefix('desk', 'redflow', lookup)).toBe('redflow');
    // A trace id that looks like a child's but is the prefix's own run.
    expect(await findRunPrefix('desk-7', 'redflow', lookup)).toBe('redflow');
    expect(lookup.reads).toEqual([]);
  });

  it("should find a subagent's run, and its subagent's, from the calls in their callers' logs", async () => {
    const lookup = cluster(logs);
    expect(await findRunPrefix('desk-1', 'redflow', lookup)).toBe('redflow.agent-research-team');
    expect(await findRunPrefix('desk-1-2', 'redflow', lookup)).toBe('redflow.agent-research-team.agent-fact-checker');
  });

  it('should find nothing for a call that started no run, an iteration with no call, or an unknown caller', async () => {
    const lookup = cluster(logs);
    expect(await findRunPrefix('desk-3', 'redflow', lookup)).toBeUndefined();
    expect(await findRunPrefix('desk-2', 'redflow', lookup)).toBeUndefined();
    expect(await findRunPrefix('nobody-1', 'redflow', lookup)).toBeUndefined();
    expect(await findRunPrefix('nobody', 'redflow', lookup)).toBeUndefined();
  });
});
