import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { fold } from '../../src/events/evolve.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { agentConfig, answer } from '../support/harness.js';

/** A tool that waits until it is aborted, and says whether it was. */
function hangingTool() {
  const seen = { aborted: false };
  const tool: ToolDefinition = {
    name: 'echo',
    description: 'never answers by itself',
    inputSchema: { type: 'object' },
    execute: (_input, context) =>
      new Promise((_resolve, reject) => {
        context.signal.addEventListener('abort', () => {
          seen.aborted = true;
          reject(new Error('aborted'));
        });
      }),
  };
  return { tool, seen };
}

describe('ending a run from outside', () => {
  it('should end a run as aborted, from the tool wait, when its signal aborts, and cancel the tool call', async () => {
    const { tool, seen } = hangingTool();
    const actors = serveActors({ model: createScriptedModel([answer.tool('echo')]), tools: [tool] });
    const store = createMemoryEventStore();
    const controller = new AbortController();
    const run = startRun({
      ...actors,
      agent: agentConfig(),
      store,
      input: 'x',
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'tool.requested') setTimeout(() => controller.abort('user pressed stop'), 5);
      },
    });
    const result = await run.result;
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'aborted', error: { code: ErrorCode.RUN_ABORTED } });
    expect(result.outcome.error?.message).toContain('user pressed stop');
    expect(seen.aborted).toBe(true);
    const { events } = await store.read(run.traceId);
    expect(events.at(-1)?.type).toBe('run.failed');
    expect(fold(events)).toEqual(result.envelope);
    await actors.close();
  });

  it('should end a run as timeout when it runs longer than its timeout', async () => {
    const { tool } = hangingTool();
    const actors = serveActors({ model: createScriptedModel([answer.tool('echo')]), tools: [tool] });
    const store = createMemoryEventStore();
    const run = startRun({ ...actors, agent: agentConfig(), store, input: 'x', timeoutMs: 50 });
    const result = await run.result;
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'timeout', error: { code: ErrorCode.RUN_TIMEOUT } });
    const { events } = await store.read(run.traceId);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'tool.requested', 'run.failed']);
    await actors.close();
  });

  it('should abort through the handle before the model answers', async () => {
    const actors = serveActors({ model: createScriptedModel([answer.final('late')], { delayMs: 1_000 }), tools: [] });
    const store = createMemoryEventStore();
    const run = startRun({ ...actors, agent: agentConfig(), store, input: 'x' });
    setTimeout(() => run.abort('changed my mind'), 10);
    const result = await run.result;
    expect(result.outcome.reason).toBe('aborted');
    expect(result.envelope.observability.events).toEqual([{ iteration: 1, action: 'error', code: ErrorCode.RUN_ABORTED }]);
    await actors.close();
  });

  it('should refuse to run on a log another writer owns, without calling any actor', async () => {
    const store = createMemoryEventStore();
    const calls: number[] = [];
    const actors = serveActors({
      model: { kind: 'spy', complete: async (request) => (calls.push(request.iteration), { text: '{"action":"final"}', attempts: 1 }) },
      tools: [],
    });
    // Someone else already wrote seq 1 of this trace.
    const first = startRun({ ...actors, agent: agentConfig(), store, input: 'x', traceId: 'shared' });
    await first.result;
    const calledBefore = calls.length;
    const second = startRun({ ...actors, agent: agentConfig(), store, input: 'x', traceId: 'shared' });
    await expect(second.result).rejects.toMatchObject({ code: ErrorCode.LOG_CONCURRENT_WRITER });
    expect(calls.length).toBe(calledBefore);
    await actors.close();
  });
});
