import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createInProcessMemoryStore } from '../../src/actors/memory/inProcessMemoryStore.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

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
});
