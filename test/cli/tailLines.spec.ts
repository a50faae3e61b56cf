// The lines `redflow tail` prints for a run's events: a model call's tokens when the model reported
// them, and a failed tool call marked ✖ with its code as in the timeline, never like a success.
import { describe, expect, it } from 'vitest';
import { formatEvent } from '../../src/cli/clusterCommands.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';

const base = { id: 't-1:4', traceId: 't-1', seq: 4, time: '2026-11-24T10:00:00.000Z', iteration: 1 } as const;
const plain = { color: false };

describe('redflow tail’s lines', () => {
  it('should give a model call’s tokens, when reported', () => {
    const answered: AgentEvent = { ...base, type: 'model.answered', data: { text: '{}', durationMs: 812, usage: { promptTokens: 120, completionTokens: 18, totalTokens: 138 } } };
    expect(formatEvent(answered, plain)).toBe('2026-11-24T10:00:00.000Z t-1 #4 model.answered 812 ms  tokens 120 in / 18 out');
    const unreported: AgentEvent = { ...base, type: 'model.answered', data: { text: '{}', durationMs: 812 } };
    expect(formatEvent(unreported, plain)).toBe('2026-11-24T10:00:00.000Z t-1 #4 model.answered 812 ms');
  });

  it('should mark a failed tool call with ✖ and its code, and leave a good one plain', () => {
    const failed: AgentEvent = {
      ...base,
      type: 'tool.completed',
      data: { tool: 'lookup_order', idempotencyKey: 't-1:1', ok: false, error: { code: 'TOOL_FAILED', message: 'no order Z-9' }, durationMs: 3 },
    };
    expect(formatEvent(failed, plain)).toBe('2026-11-24T10:00:00.000Z t-1 #4 tool.completed lookup_order ✖ TOOL_FAILED 3 ms');
    const good: AgentEvent = { ...base, type: 'tool.completed', data: { tool: 'lookup_order', idempotencyKey: 't-1:1', ok: true, output: {}, durationMs: 3 } };
    expect(formatEvent(good, plain)).toBe('2026-11-24T10:00:00.000Z t-1 #4 tool.completed lookup_order ok 3 ms');
  });
});
