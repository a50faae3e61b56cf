import { describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';

const time = '2025-01-01T00:00:00.000Z';

function started(traceId: string): AgentEvent {
  return {
    id: `${traceId}:1`,
    traceId,
    seq: 1,
    type: 'run.started',
    time,
    iteration: 0,
    data: {
      input: 'hello',
      startedAt: time,
      agent: { strategy: 'react', maxIterations: 5, allowedTools: ['t'] },
      tools: [],
    },
  };
}

function requested(traceId: string, seq: number): AgentEvent {
  return { id: `${traceId}:${seq}`, traceId, seq, type: 'model.requested', time, iteration: seq - 1, data: { prompt: `p${seq}` } };
}

async function rejection(promise: Promise<unknown>): Promise<RedflowError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RedflowError);
  return error as RedflowError;
}

describe('createMemoryEventStore', () => {
  it('should return the appended events of a run in order', async () => {
    const store = createMemoryEventStore();
    const events = [started('a'), requested('a', 2), requested('a', 3)];
    for (const event of events) await store.append(event);
    const result = await store.read('a');
    expect(result.events).toEqual(events);
    expect(result.problems).toEqual([]);
  });

  it('should keep runs apart and list their trace ids', async () => {
    const store = createMemoryEventStore();
    await store.append(started('a'));
    await store.append(started('b'));
    await store.append(requested('b', 2));
    await store.append(requested('a', 2));
    expect(store.traces()).toEqual(['a', 'b']);
    expect((await store.read('a')).events.map((e) => `${e.traceId}:${e.seq}`)).toEqual(['a:1', 'a:2']);
    expect((await store.read('b')).events.map((e) => `${e.traceId}:${e.seq}`)).toEqual(['b:1', 'b:2']);
  });

  it('should reject a first event whose seq is not 1 with LOG_CONCURRENT_WRITER', async () => {
    const store = createMemoryEventStore();
    const error = await rejection(store.append(requested('a', 2)));
    expect(error.code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
    expect(error.message).toContain('expected seq 1');
    expect(error.message).toContain('got seq 2');
    expect(store.traces()).toEqual([]);
  });

  it('should reject a repeated or skipped seq and keep the log unchanged', async () => {
    const store = createMemoryEventStore();
    await store.append(started('a'));
    await store.append(requested('a', 2));
    const repeated = await rejection(store.append(requested('a', 2)));
    expect(repeated.code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
    expect(repeated.message).toContain('expected seq 3');
    const skipped = await rejection(store.append(requested('a', 4)));
    expect(skipped.code).toBe(ErrorCode.LOG_CONCURRENT_WRITER);
    expect((await store.read('a')).events.map((e) => e.seq)).toEqual([1, 2]);
    await store.append(requested('a', 3));
    expect((await store.read('a')).events.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('should return a copy that later appends and caller mutations do not change', async () => {
    const store = createMemoryEventStore();
    await store.append(started('a'));
    const first = await store.read('a');
    await store.append(requested('a', 2));
    expect(first.events).toHaveLength(1);
    (first.events as AgentEvent[]).length = 0;
    expect((await store.read('a')).events).toHaveLength(2);
  });

  it('should store the appended object itself, without cloning it', async () => {
    const store = createMemoryEventStore();
    const event = started('a');
    await store.append(event);
    expect((await store.read('a')).events[0]).toBe(event);
  });

  it('should reject reading an unknown run with LOG_NOT_FOUND', async () => {
    const store = createMemoryEventStore();
    const error = await rejection(store.read('nope'));
    expect(error.code).toBe(ErrorCode.LOG_NOT_FOUND);
  });

  it('should keep the events readable after close', async () => {
    const store = createMemoryEventStore();
    await store.append(started('a'));
    await store.close();
    expect((await store.read('a')).events).toHaveLength(1);
  });
});
