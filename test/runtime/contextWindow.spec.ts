import { describe, expect, it } from 'vitest';
import type { ChatMessage, ModelRequest } from '../../src/actors/model.js';
import type { HistoryMessage } from '../../src/contracts/schema-types.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { runDetails } from '../../src/machines/stepDetails.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';
import { tokenCounterFor } from '../../src/runtime/tokenCounter.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

/** Runs the script with a model that keeps every request it is sent. */
async function runWithWindow(maxTokens: number | undefined, extra: { history?: HistoryMessage[]; context?: string } = {}) {
  const requests: ModelRequest[] = [];
  const inner = createScriptedModel([
    answer.tool('echo', { text: 'first '.repeat(40) }),
    answer.tool('echo', { text: 'second '.repeat(40) }),
    answer.final('done'),
  ]);
  const model = { kind: inner.kind, complete: (request: ModelRequest, signal: AbortSignal) => (requests.push(request), inner.complete(request, signal)) };
  const actors = serveActors({ model, tools: [countingTool().tool] });
  const store = createMemoryEventStore();
  const counter = await tokenCounterFor('gpt-4o');
  try {
    const run = startRun({
      ...actors,
      agent: agentConfig(),
      store,
      input: 'Where is order A-1001?',
      traceId: 'window-1',
      clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1),
      ...extra,
      ...(maxTokens !== undefined && { contextBudget: { maxTokens, countTokens: counter.countTokens } }),
    });
    const result = await run.result;
    return { result, requests, events: (await store.read('window-1')).events, store, actors };
  } finally {
    await actors.close();
  }
}

const tokens = async (messages: readonly ChatMessage[]) => {
  const { countTokens } = await tokenCounterFor('gpt-4o');
  return messages.reduce((sum, m) => sum + countTokens(m.content) + 4, 3);
};

describe('a run with a context window', () => {
  it('shows the model its earlier turns and context before the input, and logs them in run.started', async () => {
    const history: HistoryMessage[] = [
      { role: 'user', content: 'Hi, I ordered last week.' },
      { role: 'assistant', content: 'Hello! How can I help?' },
    ];
    const { requests, events } = await runWithWindow(undefined, { history, context: 'Context: the customer is Ada.' });
    expect(requests[0]?.messages.slice(1).map((m) => m.content)).toEqual(['Hi, I ordered last week.', 'Hello! How can I help?', 'Context: the customer is Ada.', 'Where is order A-1001?']);
    expect(events[0]).toMatchObject({ type: 'run.started', data: { history, context: 'Context: the customer is Ada.' } });
  });

  it('leaves out the oldest calls to fit, never the system prompt or the input, and logs how many', async () => {
    const whole = await runWithWindow(undefined);
    const lastRequest = whole.requests[2]?.messages ?? [];
    const budget = (await tokens(lastRequest)) - 30;
    const { requests, events, result } = await runWithWindow(budget);
    expect(result.outcome.status).toBe('done');
    const last = requests[2]?.messages ?? [];
    expect(await tokens(last)).toBeLessThanOrEqual(budget);
    expect(last[0]?.role).toBe('system');
    expect(last[1]?.content).toBe('Where is order A-1001?');
    expect(last[2]?.content).toBe('[2 earlier messages left out to fit the context window]');
    expect(last.slice(3)).toEqual(lastRequest.slice(4));
    const requested = events.filter((e) => e.type === 'model.requested').map((e) => (e.data as { omittedMessages?: number }).omittedMessages);
    expect(requested).toEqual([undefined, undefined, 2]);
  });

  it('shows in step details what each request showed the model, from the log', async () => {
    const budget = (await tokens((await runWithWindow(undefined)).requests[2]?.messages ?? [])) - 30;
    const { requests, events } = await runWithWindow(budget);
    const details = runDetails(events);
    expect(details.iterations[2]?.messages).toEqual(requests[2]?.messages.slice(1));
  });

  it('leaves out the same messages when a run is resumed from its log', async () => {
    const budget = (await tokens((await runWithWindow(undefined)).requests[2]?.messages ?? [])) - 30;
    const first = await runWithWindow(budget);
    // The log up to the third model request, as a crash would leave it.
    const cut = first.events.slice(0, first.events.findLastIndex((e) => e.type === 'model.requested') + 1);
    const requests: ModelRequest[] = [];
    const inner = createScriptedModel([answer.final('done')]);
    const model = { kind: inner.kind, complete: (request: ModelRequest, signal: AbortSignal) => (requests.push(request), inner.complete(request, signal)) };
    const actors = serveActors({ model, tools: [countingTool().tool] });
    const store = createMemoryEventStore();
    for (const event of cut) await store.append(event);
    const { countTokens } = await tokenCounterFor('gpt-4o');
    try {
      await resumeRun({ ...actors, agent: agentConfig(), store, events: cut, contextBudget: { maxTokens: budget, countTokens } }).result;
    } finally {
      await actors.close();
    }
    expect(requests[0]?.messages).toEqual(first.requests[2]?.messages);
  });
});
