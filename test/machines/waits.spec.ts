import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../src/contracts/schema-types.js';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore, type MemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { logStatus } from '../../src/events/resumePoint.js';
import { createRunPathCheck } from '../../src/events/runPath.js';
import { pendingWait, type WaitAnswer } from '../../src/events/pendingWait.js';
import { runSteps } from '../../src/machines/runSteps.js';
import { runDetails } from '../../src/machines/stepDetails.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { answerWaitingRun, settleRun, type RunSettlement } from '../../src/host/answerWaitingRun.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

/** A tool the client runs: the run records the call and waits for its result. */
const askUser: ToolSpec = {
  name: 'ask_user',
  description: 'asks the person at the keyboard',
  inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
  executor: 'client',
};

/** A scripted model that keeps every request it gets, to see what the model was shown. */
function recordingModel(answers: readonly unknown[]): { model: ModelActor; requests: ModelRequest[] } {
  const inner = createScriptedModel(answers);
  const requests: ModelRequest[] = [];
  return {
    requests,
    model: { kind: inner.kind, complete: (request, context) => (requests.push(request), inner.complete(request, context)) },
  };
}

/** One embedded environment: served actors, a memory log, a deterministic clock. */
function environment(answers: readonly unknown[], options: { requiresApproval?: string[]; clientTools?: ToolSpec[]; waitTimeoutMs?: number } = {}) {
  const { model, requests } = recordingModel(answers);
  const echo = countingTool();
  const actors = serveActors({ model, tools: [echo.tool] });
  const clientTools = options.clientTools ?? [];
  const store: MemoryEventStore = createMemoryEventStore();
  const env = {
    ...actors,
    tools: [...actors.tools, ...clientTools],
    agent: agentConfig({
      allowedTools: ['echo', ...clientTools.map((tool) => tool.name)],
      ...(options.requiresApproval && { requiresApproval: options.requiresApproval }),
      ...(options.waitTimeoutMs !== undefined && { waitTimeoutMs: options.waitTimeoutMs }),
    }),
    store,
    clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1),
  };
  return { env, actors, store, requests, echoCalls: echo.calls };
}

async function eventsOf(store: MemoryEventStore, traceId = 'wait-1'): Promise<AgentEvent[]> {
  return [...(await store.read(traceId)).events];
}

function checkPath(events: readonly AgentEvent[]): string | undefined {
  const check = createRunPathCheck();
  for (const event of events) {
    const why = check.next(event);
    if (why) return `seq ${event.seq}: ${why}`;
  }
  return undefined;
}

async function answerAndSettle(env: ReturnType<typeof environment>['env'], answerGiven: WaitAnswer): Promise<RunSettlement> {
  return settleRun(await answerWaitingRun({ ...env, traceId: 'wait-1', answer: answerGiven }));
}

describe('a tool the client runs: the run waits for its result in the log', () => {
  it('should park at the call with a wait for the client, then take the result and finish', async () => {
    const { env, actors, store, requests } = environment([answer.tool('ask_user', { question: 'which order?' }), answer.final('A-1 it is')], {
      clientTools: [askUser],
    });
    try {
      const first = await settleRun(startRun({ ...env, input: 'help me', traceId: 'wait-1' }));
      expect(first.kind).toBe('waiting');
      if (first.kind !== 'waiting') return;
      expect(first.wait).toMatchObject({ kind: 'client', tool: 'ask_user', input: { question: 'which order?' }, idempotencyKey: 'wait-1:1', iteration: 1 });
      expect(Date.parse(first.wait.deadline) - Date.parse(first.wait.since)).toBe(24 * 60 * 60 * 1000);
      const parked = await eventsOf(store);
      expect(parked.at(-1)).toMatchObject({ type: 'tool.requested', data: { tool: 'ask_user', wait: { for: 'client' } } });
      expect(pendingWait(parked)?.kind).toBe('client');
      expect(logStatus(parked)).toMatchObject({ kind: 'resumable', point: { at: 'client' } });
      expect(runSteps(parked).at(-1)?.state).toBe('awaitingClient');

      const second = await answerAndSettle(env, { kind: 'client', result: { ok: true, output: { order: 'A-1' } } });
      expect(second).toMatchObject({ kind: 'ended', outcome: { status: 'done', answer: 'A-1 it is' } });
      const events = await eventsOf(store);
      expect(events.slice(parked.length).map((event) => event.type)).toEqual(['run.resumed', 'tool.completed', 'model.requested', 'model.answered', 'run.completed']);
      expect(events.find((event) => event.type === 'tool.completed')?.data).toMatchObject({ ok: true, output: { order: 'A-1' } });
      expect(checkPath(events)).toBeUndefined();
      // The model saw the client's result as its observation.
      expect(requests[1]?.messages.at(-1)?.content).toContain('"order":"A-1"');
      expect(fold(events).tools.history[0]).toMatchObject({ status: 'succeeded', output: { order: 'A-1' } });
    } finally {
      await actors.close();
    }
  });

  it('should refuse a second result for the same call, and a result naming another call', async () => {
    const { env, actors } = environment([answer.tool('ask_user', { question: 'q' }), answer.tool('ask_user', { question: 'q2' }), answer.final('ok')], {
      clientTools: [askUser],
    });
    try {
      await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      await expect(answerAndSettle(env, { kind: 'client', idempotencyKey: 'wait-1:9', result: { ok: true, output: 1 } })).rejects.toMatchObject({
        code: ErrorCode.WAIT_ANSWER_MISMATCH,
      });
      await expect(answerAndSettle(env, { kind: 'approval', approved: true })).rejects.toMatchObject({ code: ErrorCode.RUN_NOT_WAITING });
      const settled = await answerAndSettle(env, { kind: 'client', idempotencyKey: 'wait-1:1', result: { ok: true, output: 1 } });
      expect(settled).toMatchObject({ kind: 'waiting', wait: { idempotencyKey: 'wait-1:2' } });
      // The first call's answer, given again, came too late: said so, not mistaken for the second call's.
      await expect(answerAndSettle(env, { kind: 'client', idempotencyKey: 'wait-1:1', result: { ok: true, output: 2 } })).rejects.toMatchObject({
        code: ErrorCode.WAIT_ALREADY_ANSWERED,
      });
      const done = await answerAndSettle(env, { kind: 'client', result: { ok: false, error: { code: ErrorCode.TOOL_FAILED, message: 'the user left' } } });
      expect(done).toMatchObject({ kind: 'ended', outcome: { status: 'done' } });
      await expect(answerAndSettle(env, { kind: 'client', result: { ok: true, output: 3 } })).rejects.toMatchObject({ code: ErrorCode.RUN_ALREADY_FINISHED });
    } finally {
      await actors.close();
    }
  });

  it('should record a result past the limits as a failed call, as it would a tool reply', async () => {
    const { env, actors, store } = environment([answer.tool('ask_user', { question: 'q' }), answer.final('ok')], { clientTools: [askUser] });
    try {
      await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      let deep: unknown = 1;
      for (let i = 0; i < 100; i++) deep = [deep];
      await answerAndSettle(env, { kind: 'client', result: { ok: true, output: deep } });
      const completed = (await eventsOf(store)).find((event) => event.type === 'tool.completed');
      expect(completed?.data).toMatchObject({ ok: false, error: { code: ErrorCode.TOOL_OUTPUT_TOO_DEEP } });
    } finally {
      await actors.close();
    }
  });

  it('should end the run blocked with WAIT_EXPIRED when the deadline passes', async () => {
    const { env, actors, store } = environment([answer.tool('ask_user', { question: 'q' }), answer.final('ok')], { clientTools: [askUser], waitTimeoutMs: 5000 });
    try {
      const parked = await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      expect(parked).toMatchObject({ kind: 'waiting', wait: { timeoutMs: 5000 } });
      const ended = await answerAndSettle(env, { kind: 'expire' });
      expect(ended).toMatchObject({ kind: 'ended', outcome: { status: 'blocked', reason: 'wait_expired', error: { code: ErrorCode.WAIT_EXPIRED } } });
      const events = await eventsOf(store);
      expect(events.at(-1)?.type).toBe('run.failed');
      expect(checkPath(events)).toBeUndefined();
      expect(runDetails(events).iterations[0]?.failure).toMatchObject({ step: 'tool', error: { code: ErrorCode.WAIT_EXPIRED } });
    } finally {
      await actors.close();
    }
  });

  it('should leave a parked run parked when resumed without an answer, recording nothing', async () => {
    const { env, actors, store } = environment([answer.tool('ask_user', { question: 'q' })], { clientTools: [askUser] });
    try {
      await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      const before = await eventsOf(store);
      const { resumeRun } = await import('../../src/runtime/runAgent.js');
      await expect(resumeRun({ ...env, events: before }).result).rejects.toMatchObject({ code: ErrorCode.RUN_WAITING });
      expect(await eventsOf(store)).toHaveLength(before.length);
    } finally {
      await actors.close();
    }
  });
});

describe('a tool that requires approval', () => {
  it('should wait for the approval, then make the call', async () => {
    const { env, actors, store, echoCalls } = environment([answer.tool('echo', { text: 'hi' }), answer.final('done')], { requiresApproval: ['echo'] });
    try {
      const parked = await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      expect(parked).toMatchObject({ kind: 'waiting', wait: { kind: 'approval', tool: 'echo', input: { text: 'hi' } } });
      expect(echoCalls).toHaveLength(0);
      expect(runSteps(await eventsOf(store)).at(-1)?.state).toBe('awaitingApproval');
      const ended = await answerAndSettle(env, { kind: 'approval', approved: true, reason: 'looks fine' });
      expect(ended).toMatchObject({ kind: 'ended', outcome: { status: 'done' } });
      expect(echoCalls).toEqual([{ text: 'hi' }]);
      const events = await eventsOf(store);
      expect(events.map((event) => event.type)).toContain('tool.approved');
      expect(events.find((event) => event.type === 'tool.approved')?.data).toEqual({ tool: 'echo', idempotencyKey: 'wait-1:1', reason: 'looks fine' });
      expect(checkPath(events)).toBeUndefined();
      expect(runDetails(events).iterations[0]?.tool).toMatchObject({ approval: { decision: 'approved', reason: 'looks fine' }, waiting: null, result: { ok: true } });
    } finally {
      await actors.close();
    }
  });

  it('should turn a denial into the observation the model sees, and never make the call', async () => {
    const { env, actors, store, echoCalls, requests } = environment([answer.tool('echo', { text: 'rm -rf' }), answer.final('I will not do that')], {
      requiresApproval: ['echo'],
    });
    try {
      await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      const ended = await answerAndSettle(env, { kind: 'approval', approved: false, reason: 'too dangerous' });
      expect(ended).toMatchObject({ kind: 'ended', outcome: { status: 'done', answer: 'I will not do that' } });
      expect(echoCalls).toHaveLength(0);
      const observation = requests[1]?.messages.at(-1)?.content ?? '';
      expect(observation).toContain('TOOL_DENIED');
      expect(observation).toContain('too dangerous');
      const events = await eventsOf(store);
      expect(events.map((event) => event.type)).toEqual([
        'run.started',
        'model.requested',
        'model.answered',
        'tool.requested',
        'run.resumed',
        'tool.denied',
        'model.requested',
        'model.answered',
        'run.completed',
      ]);
      expect(checkPath(events)).toBeUndefined();
      expect(fold(events).observability.events[0]).toMatchObject({ action: 'tool', code: ErrorCode.TOOL_DENIED });
      expect(runDetails(events).iterations[0]).toMatchObject({
        tool: { approval: { decision: 'denied', reason: 'too dangerous' }, result: { ok: false, error: { code: ErrorCode.TOOL_DENIED } } },
        failure: { step: 'tool' },
      });
    } finally {
      await actors.close();
    }
  });

  it('should wait for approval, then for the client, when a client tool requires approval', async () => {
    const { env, actors, store } = environment([answer.tool('ask_user', { question: 'q' }), answer.final('ok')], {
      clientTools: [askUser],
      requiresApproval: ['ask_user'],
    });
    try {
      expect(await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }))).toMatchObject({ kind: 'waiting', wait: { kind: 'approval' } });
      await expect(answerAndSettle(env, { kind: 'client', result: { ok: true, output: 1 } })).rejects.toMatchObject({ code: ErrorCode.RUN_NOT_WAITING });
      const approved = await answerAndSettle(env, { kind: 'approval', approved: true });
      expect(approved).toMatchObject({ kind: 'waiting', wait: { kind: 'client', input: { question: 'q' } } });
      expect(runSteps(await eventsOf(store)).at(-1)?.state).toBe('awaitingClient');
      await expect(answerAndSettle(env, { kind: 'approval', approved: true })).rejects.toMatchObject({ code: ErrorCode.WAIT_ALREADY_ANSWERED });
      expect(await answerAndSettle(env, { kind: 'client', result: { ok: true, output: 'yes' } })).toMatchObject({ kind: 'ended' });
      expect(checkPath(await eventsOf(store))).toBeUndefined();
    } finally {
      await actors.close();
    }
  });

  it('should take an abort as the answer to a wait, and never make the call', async () => {
    const { env, actors, store, echoCalls } = environment([answer.tool('echo', { text: 'hi' })], { requiresApproval: ['echo'] });
    try {
      await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      const ended = await answerAndSettle(env, { kind: 'abort', reason: 'changed my mind' });
      expect(ended).toMatchObject({ kind: 'ended', outcome: { status: 'blocked', reason: 'aborted' } });
      expect(echoCalls).toHaveLength(0);
      expect(checkPath(await eventsOf(store))).toBeUndefined();
    } finally {
      await actors.close();
    }
  });

  it('should let an abort end a run resumed into its wait', async () => {
    const { env, actors, store } = environment([answer.tool('echo', { text: 'hi' })], { requiresApproval: ['echo'] });
    try {
      await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      const controller = new AbortController();
      controller.abort('no longer needed');
      const handle = await answerWaitingRun({ ...env, traceId: 'wait-1', answer: { kind: 'expire' }, signal: controller.signal });
      const settled = await settleRun(handle);
      expect(settled).toMatchObject({ kind: 'ended', outcome: { status: 'blocked' } });
      expect(checkPath(await eventsOf(store))).toBeUndefined();
    } finally {
      await actors.close();
    }
  });
});

describe('the path check and the waits', () => {
  it('should refuse a result for a call that waits for its approval, and a wait the config does not make', async () => {
    const { env, actors, store } = environment([answer.tool('echo', { text: 'hi' })], { requiresApproval: ['echo'] });
    try {
      await settleRun(startRun({ ...env, input: 'x', traceId: 'wait-1' }));
      const events = await eventsOf(store);
      const requested = events.at(-1) as Extract<AgentEvent, { type: 'tool.requested' }>;
      const completed = {
        ...requested,
        id: `wait-1:${requested.seq + 1}`,
        seq: requested.seq + 1,
        type: 'tool.completed',
        data: { tool: 'echo', idempotencyKey: 'wait-1:1', ok: true, output: 1, durationMs: 0 },
      } as AgentEvent;
      expect(checkPath([...events, completed])).toMatch(/waits for its approval/);
      const noWait = { ...requested, data: { ...requested.data, wait: undefined } } as AgentEvent;
      delete (noWait.data as { wait?: unknown }).wait;
      expect(checkPath([...events.slice(0, -1), noWait])).toMatch(/records no wait, but the run's config makes it a wait for approval/);
      expect(() => logStatus([...events, completed])).toThrow(RedflowError);
    } finally {
      await actors.close();
    }
  });
});
