import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createInProcessMemoryStore } from '../../src/actors/memory/inProcessMemoryStore.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { resumeRun } from '../../src/runtime/runAgent.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import type { MemoryStore } from '../../src/actors/memory.js';
import { agentConfig, answer, countingTool, runScripted } from '../support/harness.js';

/** Resumes `events` (a log cut short) against a fresh model that must not be asked, with `store` as memory. */
async function resumeWithMemory(events: readonly AgentEvent[], store: MemoryStore) {
  const actors = serveActors({ model: createScriptedModel([]), tools: [countingTool().tool], memory: store });
  const log = createMemoryEventStore();
  for (const event of events) await log.append(event);
  try {
    const result = await resumeRun({
      ...actors,
      agent: agentConfig(),
      store: log,
      events,
      memory: { ...actors.memorySubjects!, conversationId: 'c1' },
    }).result;
    return { result, events: [...(await log.read(result.traceId)).events] };
  } finally {
    await actors.close();
  }
}

const turnsOf = async (store: MemoryStore) => ((await store.load('c1'))?.turns ?? []) as { traceId: string }[];

describe('conversation memory', () => {
  it('should load the memory into the envelope and run.started, and add the turn at the end', async () => {
    const store = createInProcessMemoryStore();
    await store.save('c1', { turns: [{ input: 'earlier', answer: 'before', outcome: 'done', traceId: 't0' }], user: 'Ada' });
    const actors = serveActors({ model: createScriptedModel([answer.final('hello Ada')]), tools: [countingTool().tool], memory: store });
    const events = createMemoryEventStore();
    const run = startRun({
      ...actors,
      agent: agentConfig(),
      store: events,
      input: 'hi',
      traceId: 't1',
      memory: { ...actors.memorySubjects!, conversationId: 'c1', maxTurns: 2 },
    });
    const { envelope } = await run.result;
    expect(envelope.memory).toMatchObject({ user: 'Ada' });
    const [started] = (await events.read('t1')).events;
    expect(started?.data).toMatchObject({ memory: { user: 'Ada' }, conversationId: 'c1' });
    const saved = await store.load('c1');
    expect(saved).toEqual({
      user: 'Ada',
      turns: [
        { input: 'earlier', answer: 'before', outcome: 'done', traceId: 't0' },
        { input: 'hi', answer: 'hello Ada', outcome: 'done', traceId: 't1' },
      ],
    });
    await actors.close();
  });

  it('should keep the turns of two runs of one conversation that end together', async () => {
    const store = createInProcessMemoryStore();
    const actors = serveActors({ model: createScriptedModel([answer.final('ok')]), tools: [countingTool().tool], memory: store });
    const events = createMemoryEventStore();
    const runs = ['a', 'b'].map((traceId) =>
      startRun({ ...actors, agent: agentConfig(), store: events, input: traceId, traceId, memory: { ...actors.memorySubjects!, conversationId: 'shared' } }),
    );
    await Promise.all(runs.map((run) => run.result));
    const saved = await store.load('shared');
    expect((saved?.turns as { traceId: string }[]).map((t) => t.traceId).sort()).toEqual(['a', 'b']);
    await actors.close();
  });

  it('should save the turn as a step of its own, logged before the run’s ending', async () => {
    const { events, result } = await runScripted({ answers: [answer.tool('echo'), answer.final('ok')], conversationId: 'c1' });
    expect(events.slice(-3).map((event) => event.type)).toEqual(['memory.requested', 'memory.saved', 'run.completed']);
    expect(events.at(-3)?.data).toMatchObject({ conversationId: 'c1', turn: { input: 'hello', answer: 'ok', outcome: 'done', traceId: 'trace-1' } });
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'ok' });
  });

  it('should save the turn of a run killed after its ending was decided and before the save, once, when resumed', async () => {
    const store = createInProcessMemoryStore();
    const { events, result } = await runScripted({ answers: [answer.final('ok')], conversationId: 'c1', memoryStore: createInProcessMemoryStore() });
    const cut = events.findIndex((event) => event.type === 'memory.requested');
    const resumed = await resumeWithMemory(events.slice(0, cut + 1), store);
    expect(resumed.result.outcome).toEqual(result.outcome);
    expect((await turnsOf(store)).map((turn) => turn.traceId)).toEqual(['trace-1']);
    expect(resumed.events.slice(-3).map((event) => event.type)).toEqual(['run.resumed', 'memory.saved', 'run.completed']);
  });

  it('should not add the turn twice when the save had happened before the crash', async () => {
    const store = createInProcessMemoryStore();
    const { events } = await runScripted({ answers: [answer.final('ok')], conversationId: 'c1', memoryStore: store });
    const cut = events.findIndex((event) => event.type === 'memory.requested');
    await resumeWithMemory(events.slice(0, cut + 1), store);
    const afterSaved = await resumeWithMemory(events.slice(0, cut + 2), store);
    expect(afterSaved.events.slice(-2).map((event) => event.type)).toEqual(['run.resumed', 'run.completed']);
    expect((await turnsOf(store)).map((turn) => turn.traceId)).toEqual(['trace-1']);
  });

  it('should end blocked with memory_error, keeping the answer, when the turn cannot be saved', async () => {
    const failing: MemoryStore = {
      ...createInProcessMemoryStore(),
      update: () => Promise.reject(new Error('disk full')),
    };
    const { result, events } = await runScripted({ answers: [answer.final('ok')], conversationId: 'c1', memoryStore: failing });
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'memory_error', answer: 'ok', error: { code: 'MEMORY_FAILED' } });
    expect(events.at(-1)?.type).toBe('run.failed');
  });

  it('should save the turn of an aborted run and record it as aborted', async () => {
    const store = createInProcessMemoryStore();
    const slow = countingTool('echo', () => new Promise(() => undefined));
    const actors = serveActors({ model: createScriptedModel([answer.tool('echo')]), tools: [slow.tool], memory: store });
    const log = createMemoryEventStore();
    const run = startRun({ ...actors, agent: agentConfig(), store: log, input: 'hi', traceId: 't-abort', memory: { ...actors.memorySubjects!, conversationId: 'c1' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    run.abort('enough');
    const result = await run.result;
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
    expect((await turnsOf(store)).map((turn) => turn.traceId)).toEqual(['t-abort']);
    await actors.close();
  });
});
