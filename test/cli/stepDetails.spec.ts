// Unit tests of the step data behind `redflow replay --steps`: real runs of the statechart
// (scripted model, in-process actors, in-memory log) read back with runDetails.
import { describe, expect, it } from 'vitest';
import type { MemoryStore } from '../../src/actors/memory.js';
import type { ChatMessage, ModelActor, ModelAnswer, ModelRequest } from '../../src/actors/model.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createInProcessMemoryStore } from '../../src/actors/memory/inProcessMemoryStore.js';
import { runDetails } from '../../src/machines/stepDetails.js';
import { cutText, formatSteps, STEP_TEXT_LIMIT } from '../../src/cli/formatSteps.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { answerWaitingRun, settleRun } from '../../src/host/answerWaitingRun.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

/** Runs scripted answers and keeps the messages of every model call, as the model received them. */
async function runRecordingPrompts(answers: readonly unknown[], options: { conversationId?: string } = {}) {
  const inner = createScriptedModel(answers);
  const sent: (readonly ChatMessage[])[] = [];
  const model = {
    kind: inner.kind,
    complete: (...args: Parameters<typeof inner.complete>) => {
      sent.push(args[0].messages);
      return inner.complete(...args);
    },
  };
  const failing = countingTool('boom', () => {
    throw new Error('the service is down');
  });
  const memoryStore = options.conversationId === undefined ? undefined : createInProcessMemoryStore();
  const actors = serveActors({ model, tools: [countingTool().tool, failing.tool], ...(memoryStore && { memory: memoryStore }) });
  const store = createMemoryEventStore();
  try {
    const run = startRun({
      ...actors,
      agent: agentConfig({ allowedTools: ['echo', 'boom'], instructions: 'Be brief.' }),
      store,
      input: { question: 'hello' },
      traceId: 'trace-steps',
      clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1),
      ...(actors.memorySubjects && options.conversationId !== undefined && {
        memory: { ...actors.memorySubjects, conversationId: options.conversationId },
      }),
    });
    await run.result;
    return { events: [...(await store.read(run.traceId)).events], sent };
  } finally {
    await actors.close();
  }
}

describe('runDetails', () => {
  it('should rebuild exactly the messages each model call was sent, and the system prompt once', async () => {
    const { events, sent } = await runRecordingPrompts([answer.tool('echo', { text: 'hi' }), answer.tool('boom'), answer.final('done')]);
    const details = runDetails(events);
    expect(sent).toHaveLength(3);
    expect(details.systemPrompt).toBe(sent[0]?.[0]?.content);
    expect(details.iterations.map((it) => it.messages)).toEqual(sent.map((messages) => messages.slice(1)));
    expect(details.input).toEqual({ question: 'hello' });
  });

  it('should give each answer its verdict, each tool its result, and mark the failed tool call with its code', async () => {
    const { events } = await runRecordingPrompts([answer.tool('echo', { text: 'hi' }, 0.6), answer.tool('boom'), answer.final('done', 0.8)]);
    const [first, second, third] = runDetails(events).iterations;
    expect(first).toMatchObject({
      iteration: 1,
      model: { verdict: { kind: 'tool', tool: 'echo' }, thoughtHidden: false, rejection: null },
      tool: { tool: 'echo', input: { text: 'hi' }, confidence: 0.6, result: { ok: true, output: { echoed: { text: 'hi' } } } },
      failure: null,
    });
    expect(first?.model?.text).toBe(JSON.stringify(answer.tool('echo', { text: 'hi' }, 0.6)));
    expect(second).toMatchObject({
      tool: { tool: 'boom', result: { ok: false, error: { code: 'TOOL_FAILED', message: expect.stringContaining('the service is down') } } },
      failure: { step: 'tool', error: { code: 'TOOL_FAILED' } },
    });
    expect(third).toMatchObject({ model: { verdict: { kind: 'final' } }, tool: null, failure: null });
    expect(runDetails(events).ending).toMatchObject({ event: 'run.completed', confidence: 0.8, outcome: { reason: 'final_answer', answer: 'done' } });
  });

  it('should mark an answer the core rejected with its code, and end there', async () => {
    const { events } = await runRecordingPrompts(['{"action": "final",']);
    const details = runDetails(events);
    expect(details.iterations).toHaveLength(1);
    expect(details.iterations[0]).toMatchObject({
      model: { text: '{"action": "final",', verdict: { kind: 'rejected', error: { code: 'INVALID_JSON' } } },
      failure: { step: 'answer', error: { code: 'INVALID_JSON' } },
    });
    expect(details.ending).toMatchObject({ event: 'run.failed', outcome: { reason: 'invalid_answer' } });
  });

  it('should mark a model call that failed, with no answer, as the failed step', async () => {
    const { events } = await runRecordingPrompts([]);
    const details = runDetails(events);
    expect(details.ending?.outcome.reason).toBe('model_error');
    expect(details.iterations).toEqual([
      expect.objectContaining({ iteration: 1, model: null, tool: null, failure: { step: 'model', error: details.ending?.outcome.error } }),
    ]);
    expect(formatSteps(details, { color: false, full: false }).join('\n')).toContain(`  model: ✖ ${details.ending?.outcome.error?.code}: ${details.ending?.outcome.error?.message}`);
  });

  it('should read the verdict through the memory step and report the save', async () => {
    const { events } = await runRecordingPrompts([answer.final('done')], { conversationId: 'conv-1' });
    const details = runDetails(events);
    expect(details.iterations[0]?.model?.verdict).toEqual({ kind: 'final' });
    expect(details.memory).toMatchObject({ conversationId: 'conv-1', turn: { answer: 'done' }, savedInMs: expect.any(Number) });
  });

  it('should say when the answer’s thought was kept out of the log, and show the answer without it', async () => {
    const { events } = await runRecordingPrompts([{ ...answer.final('done'), thought: 'the secret reasoning' }]);
    const model = runDetails(events).iterations[0]?.model;
    expect(model?.thoughtHidden).toBe(true);
    expect(model?.text).not.toContain('the secret reasoning');
    expect(formatSteps(runDetails(events), { color: false, full: true }).join('\n')).toContain('its thought taken out of the log (debug off)');
  });

  it('should show an unfinished log as pending: a tool call without result and no ending', async () => {
    const { events } = await runRecordingPrompts([answer.tool('echo', { text: 'hi' }), answer.final('done')]);
    const cut = events.slice(0, events.findIndex((event) => event.type === 'tool.requested') + 1);
    const details = runDetails(cut);
    expect(details.iterations[0]?.tool?.result).toBeNull();
    expect(details.ending).toBeNull();
    const onlyAnswered = runDetails(events.slice(0, events.findIndex((event) => event.type === 'model.answered') + 1));
    expect(onlyAnswered.iterations[0]?.model?.verdict).toEqual({ kind: 'pending' });
  });
});

/** A tool that works until the run's signal stops it; `onStart` hears each call begin. */
function hangingTool(onStart: () => void = () => undefined) {
  return countingTool('slow', async () => {
    onStart();
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    return { late: true };
  }).tool;
}

/** Runs `options` with in-process actors and an in-memory log, and returns the log. */
async function runEnding(options: {
  answers?: readonly unknown[];
  model?: ModelActor;
  tools?: readonly ToolDefinition[];
  maxIterations?: number;
  timeoutMs?: number;
  memoryStore?: MemoryStore;
  /** Called with the run once it is started (to abort it from a tool). */
  started?: (run: { abort(reason?: string): void }) => void;
}) {
  const model = options.model ?? createScriptedModel(options.answers ?? []);
  const tools = options.tools ?? [countingTool().tool];
  const actors = serveActors({ model, tools, ...(options.memoryStore && { memory: options.memoryStore }) });
  const store = createMemoryEventStore();
  try {
    const run = startRun({
      ...actors,
      agent: agentConfig({ allowedTools: tools.map((tool) => tool.name), maxIterations: options.maxIterations ?? 5 }),
      store,
      input: 'hello',
      traceId: 'trace-ending',
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      ...(actors.memorySubjects && options.memoryStore && { memory: { ...actors.memorySubjects, conversationId: 'conv-ending' } }),
    });
    options.started?.(run);
    await run.result;
    return [...(await store.read(run.traceId)).events];
  } finally {
    await actors.close();
  }
}

/** The text of `replay --steps` for `events`, without colour. */
const stepsText = (events: Parameters<typeof runDetails>[0]) => formatSteps(runDetails(events), { color: false, full: false }).join('\n');

describe('runDetails: the iteration in which a run ended', () => {
  it('should mark a tool call under way when the run timed out with the outcome’s code, the call without a result', async () => {
    const events = await runEnding({ answers: [answer.tool('slow')], tools: [hangingTool()], timeoutMs: 300 });
    const details = runDetails(events);
    expect(details.ending?.outcome.reason).toBe('timeout');
    expect(details.iterations).toHaveLength(1);
    expect(details.iterations[0]).toMatchObject({ tool: { tool: 'slow', result: null }, failure: { step: 'tool', error: { code: 'RUN_TIMEOUT' } } });
    const text = stepsText(events);
    expect(text).toContain('── #1 ──  ✖ RUN_TIMEOUT');
    expect(text).toContain('    ✖ the run ended during the call: RUN_TIMEOUT: the run did not finish within 300 ms');
    expect(text).not.toContain('the call is unfinished');
  });

  it('should mark a tool call under way when the run was aborted', async () => {
    let abort = () => {};
    const events = await runEnding({ answers: [answer.tool('slow')], tools: [hangingTool(() => abort())], started: (run) => (abort = () => run.abort('stop it')) });
    const [only] = runDetails(events).iterations;
    expect(only).toMatchObject({ tool: { result: null }, failure: { step: 'tool', error: { code: 'RUN_ABORTED' } } });
    expect(stepsText(events)).toContain('── #1 ──  ✖ RUN_ABORTED');
  });

  it('should mark a model request that got no answer before the run timed out', async () => {
    const inner = createScriptedModel([answer.tool('echo', { text: 'hi' }), answer.final('never')]);
    // The second call never answers: it waits until the run's timeout aborts it.
    const model: ModelActor = {
      kind: inner.kind,
      complete: (request: ModelRequest, signal: AbortSignal) =>
        request.iteration === 1
          ? inner.complete(request, signal)
          : new Promise<ModelAnswer>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true })),
    };
    const events = await runEnding({ model, timeoutMs: 300 });
    const details = runDetails(events);
    expect(details.iterations.map((it) => it.failure)).toEqual([null, { step: 'model', error: expect.objectContaining({ code: 'RUN_TIMEOUT' }) }]);
    expect(details.iterations[1]?.model).toBeNull();
    const text = stepsText(events);
    expect(text).toContain('── #2 ──  ✖ RUN_TIMEOUT');
    expect(text).toContain('  model: ✖ RUN_TIMEOUT: the run did not finish within 300 ms');
  });

  it('should mark the iteration whose good tool call reached the iteration limit, with ITERATION_OVERFLOW', async () => {
    const events = await runEnding({ answers: [answer.tool('echo', { text: 'hi' })], maxIterations: 1 });
    const details = runDetails(events);
    expect(details.ending).toMatchObject({ event: 'run.completed', outcome: { status: 'escalate', error: { code: 'ITERATION_OVERFLOW' } } });
    expect(details.iterations[0]).toMatchObject({ tool: { result: { ok: true } }, failure: { step: 'ending', error: { code: 'ITERATION_OVERFLOW' } } });
    const text = stepsText(events);
    expect(text).toContain('── #1 ──  ✖ ITERATION_OVERFLOW');
    expect(text).toMatch(/\n {2}✖ the run ended after this iteration: ITERATION_OVERFLOW: no final answer after 1 iterations/);
  });

  it('should mark a failed memory save as the memory step, not as the final answer', async () => {
    const failing: MemoryStore = {
      load: () => Promise.resolve(undefined),
      save: () => Promise.reject(new Error('disk full')),
      update: () => Promise.reject(new Error('disk full')),
    };
    const events = await runEnding({ answers: [answer.final('done')], memoryStore: failing });
    const [only] = runDetails(events).iterations;
    expect(runDetails(events).ending?.outcome.reason).toBe('memory_error');
    expect(only?.model?.verdict).toEqual({ kind: 'final' });
    expect(only?.failure).toMatchObject({ step: 'memory', error: { code: runDetails(events).ending?.outcome.error?.code } });
    expect(stepsText(events)).toContain(`  ✖ the run ended while saving its turn to memory: ${runDetails(events).ending?.outcome.error?.code}`);
  });

  it('should leave the iterations of a run that ended with its final answer unmarked', async () => {
    const events = await runEnding({ answers: [answer.tool('echo', { text: 'hi' }), answer.final('done')] });
    expect(runDetails(events).iterations.map((it) => it.failure)).toEqual([null, null]);
  });
});

describe('formatSteps: calls that wait for a person', () => {
  it('should print a call waiting for an approval, then its denial with the reason', async () => {
    const actors = serveActors({ model: createScriptedModel([answer.tool('echo', { text: 'rm -rf' }), answer.final('I was not allowed.')]), tools: [countingTool().tool] });
    const store = createMemoryEventStore();
    const env = { ...actors, agent: agentConfig({ requiresApproval: ['echo'] }), store };
    try {
      const first = await settleRun(startRun({ ...env, input: 'clean up', traceId: 'trace-approval' }));
      expect(first.kind).toBe('waiting');
      const parked = [...(await store.read('trace-approval')).events];
      expect(stepsText(parked)).toContain('    waiting for an approval (the log stops here)');

      await settleRun(await answerWaitingRun({ ...env, traceId: 'trace-approval', answer: { kind: 'approval', approved: false, reason: 'too dangerous' } }));
      const text = stepsText([...(await store.read('trace-approval')).events]);
      expect(text).toContain('    input: {"text":"rm -rf"}\n    denied: too dangerous\n    ✖ error');
      expect(text).not.toContain('waiting for');
    } finally {
      await actors.close();
    }
  });
});

describe('formatSteps', () => {
  it('should cut long texts with a marker unless full, and print a failed step with ✖ and its code', async () => {
    const long = 'x'.repeat(STEP_TEXT_LIMIT + 50);
    expect(cutText(long, false)).toBe(`${'x'.repeat(STEP_TEXT_LIMIT)}[… 50 more characters; --full shows them]`);
    expect(cutText(long, true)).toBe(long);
    const { events } = await runRecordingPrompts([answer.tool('boom'), answer.final('done')]);
    const text = formatSteps(runDetails(events), { color: false, full: false });
    expect(text).toContain('── #1 ──  ✖ TOOL_FAILED');
    expect(text).toContain('── #2 ──');
    expect(text.filter((line) => line.startsWith('system prompt'))).toHaveLength(1);
  });
});
