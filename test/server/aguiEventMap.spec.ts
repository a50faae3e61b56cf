// The mapping of a run to AG-UI events (src/server/aguiEventMap.ts), on its own: the streamed
// answer and the final answer's message, pieces that come before the log shows their model call,
// and a stream that starts mid-run.
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { createAguiMapper, type AguiEvent } from '../../src/server/aguiEventMap.js';

const T = 'trace-1';
const at = (seq: number, type: string, iteration: number, data: Record<string, unknown> = {}) =>
  ({ id: `${T}:${seq}`, traceId: T, seq, type, time: '2026-11-28T00:00:00.000Z', iteration, data }) as unknown as AgentEvent;
const log = (answer: string) => [
  at(1, 'run.started', 0, { input: 'hi', startedAt: '2026-11-28T00:00:00.000Z', agent: { allowedTools: [] }, tools: [] }),
  at(2, 'model.requested', 1, { prompt: 'be nice' }),
  at(3, 'model.answered', 1, { text: answer, durationMs: 1, attempts: 1 }),
  at(4, 'run.completed', 1, { outcome: { status: 'done', reason: 'final_answer', answer } }),
];
const texts = (events: readonly AguiEvent[]) => events.filter((event) => event.type.startsWith('TEXT_MESSAGE')).map((event) => [event.type, event.messageId, event.delta]);

describe('the AG-UI mapping of a run', () => {
  it('should make the streamed answer the final message when its pieces are the answer\'s text, sending what they lacked', () => {
    const mapper = createAguiMapper({ traceId: T, threadId: 'th', runId: 'r' });
    const [started, requested, answered, completed] = log('Hello world');
    // The pieces come live, before the follow of the log has reached their model call: they wait for it.
    const out = [...mapper.start(), ...mapper.chunk({ iteration: 1, attempt: 1, text: 'Hello' }), ...mapper.event(started!), ...mapper.event(requested!), ...mapper.chunk({ iteration: 1, attempt: 1, text: ' wor' })];
    out.push(...mapper.event(answered!), ...mapper.chunk({ iteration: 1, attempt: 1, text: 'late' }), ...mapper.event(completed!));
    expect(out.map((event) => event.type)).toEqual(['RUN_STARTED', 'STATE_SNAPSHOT', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'STEP_FINISHED', 'STATE_SNAPSHOT', 'RUN_FINISHED']);
    expect(texts(out)).toEqual([
      ['TEXT_MESSAGE_START', `${T}:1:1`, undefined],
      ['TEXT_MESSAGE_CONTENT', `${T}:1:1`, 'Hello'],
      ['TEXT_MESSAGE_CONTENT', `${T}:1:1`, ' wor'],
      ['TEXT_MESSAGE_CONTENT', `${T}:1:1`, 'ld'],
      ['TEXT_MESSAGE_END', `${T}:1:1`, undefined],
    ]);
  });

  it('should send the final answer as a message of its own when the pieces were the model\'s JSON', () => {
    const mapper = createAguiMapper({ traceId: T, threadId: 'th', runId: 'r' });
    const [started, requested, answered, completed] = log('Hello');
    const out = [...mapper.event(started!), ...mapper.event(requested!), ...mapper.chunk({ iteration: 1, attempt: 1, text: '{"action":"final","message":"Hello"}' })];
    out.push(...mapper.event(answered!), ...mapper.event(completed!));
    expect(texts(out).map(([type, id]) => `${type} ${id}`)).toEqual([
      `TEXT_MESSAGE_START ${T}:1:1`,
      `TEXT_MESSAGE_CONTENT ${T}:1:1`,
      `TEXT_MESSAGE_END ${T}:1:1`,
      `TEXT_MESSAGE_START ${T}:answer`,
      `TEXT_MESSAGE_CONTENT ${T}:answer`,
      `TEXT_MESSAGE_END ${T}:answer`,
    ]);
  });

  it('should start a stream after a cursor with the state there and the open step, sending nothing from before it', () => {
    const mapper = createAguiMapper({ traceId: T, threadId: 'th', runId: 'r', afterSeq: 3 });
    const events = log('Hello');
    const out = events.flatMap((event) => mapper.event(event));
    expect(out.map((event) => event.type)).toEqual(['STATE_SNAPSHOT', 'STEP_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'STEP_FINISHED', 'STATE_SNAPSHOT', 'RUN_FINISHED']);
    expect(out[0]).toMatchObject({ snapshot: { input: 'hi' } });
  });
});
