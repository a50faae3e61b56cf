import { describe, expect, it } from 'vitest';
import type { AgentCoreReactConfig } from '../../src/contracts/schema-types.js';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore, type MemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { logStatus } from '../../src/events/resumePoint.js';
import { createRunPathCheck } from '../../src/events/runPath.js';
import { runSteps } from '../../src/machines/runSteps.js';
import { runDetails } from '../../src/machines/stepDetails.js';
import type { WaitAnswer } from '../../src/events/pendingWait.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';
import type { RunHandle } from '../../src/runtime/runSession.js';
import { answerWaitingRun, settleRun, type RunSettlement } from '../../src/host/answerWaitingRun.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { exitCodeOf, ExitCode } from '../../src/cli/exitCodes.js';
import { ErrorCode } from '../../src/errors.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

const escalate = { action: 'escalate', input: { reason: 'a refund over the limit', question: 'May I refund 120 EUR?', context: { order: 'A-1' } } };
const requestInfo = { action: 'request_info', input: { question: 'Which order do you mean?' } };
const delegate = { action: 'delegate', input: { agent_id: 'billing', task: 'refund order A-1' }, message: 'billing handles refunds' };
const summarySchema = { type: 'object', required: ['summary'], additionalProperties: false, properties: { summary: { type: 'string' } } };

/** A scripted model that keeps what it was sent. */
function recordingModel(answers: readonly unknown[]): { model: ModelActor; requests: ModelRequest[] } {
  const inner = createScriptedModel(answers);
  const requests: ModelRequest[] = [];
  return { requests, model: { kind: inner.kind, complete: (request, context) => (requests.push(request), inner.complete(request, context)) } };
}

function environment(answers: readonly unknown[], agent: Partial<AgentCoreReactConfig> = {}) {
  const { model, requests } = recordingModel(answers);
  const echo = countingTool();
  const actors = serveActors({ model, tools: [echo.tool] });
  const store: MemoryEventStore = createMemoryEventStore();
  const env = { ...actors, agent: agentConfig(agent), store, clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1) };
  return { env, actors, store, requests };
}

function pathProblem(events: readonly AgentEvent[]): string | undefined {
  const check = createRunPathCheck();
  for (const event of events) {
    const why = check.next(event);
    if (why) return `seq ${event.seq}: ${why}`;
  }
  return undefined;
}

/** Runs to its end, answering each question to a person with `answers` in turn (or letting its wait expire when they run out). */
async function drive(env: ReturnType<typeof environment>['env'], humanAnswers: readonly string[], first?: RunHandle) {
  let handle = first ?? startRun({ ...env, input: 'refund order A-1', traceId: 'd-1' });
  const given = [...humanAnswers];
  const settlements: RunSettlement[] = [];
  for (;;) {
    const settled = await settleRun(handle);
    settlements.push(settled);
    const events = [...(await env.store.read('d-1')).events];
    // The live envelope is the fold of the log, at every settlement.
    expect(fold(events)).toEqual(settled.envelope);
    if (settled.kind === 'ended') return { settled, settlements, events };
    const text = given.shift();
    const reply: WaitAnswer = text === undefined ? { kind: 'expire' } : { kind: 'human', text };
    handle = await answerWaitingRun({ ...env, traceId: 'd-1', answer: reply });
  }
}

describe('escalate and request_info: the run waits for a person', () => {
  it('should park in awaitingHuman with the question, and take the answer as the next observation', async () => {
    const { env, actors, requests } = environment([escalate, answer.final('refunded after approval')]);
    try {
      const { settled, settlements, events } = await drive(env, ['Yes, refund it']);
      const parked = settlements[0];
      expect(parked?.kind).toBe('waiting');
      if (parked?.kind !== 'waiting') throw new Error('unreachable');
      expect(parked.wait).toMatchObject({ kind: 'human', idempotencyKey: 'd-1:1', iteration: 1, question: { action: 'escalate', question: 'May I refund 120 EUR?', reason: 'a refund over the limit', context: { order: 'A-1' } } });
      expect(events.map((e) => e.type)).toEqual([
        'run.started',
        'model.requested',
        'model.answered',
        'human.requested',
        'run.resumed',
        'human.answered',
        'model.requested',
        'model.answered',
        'run.completed',
      ]);
      expect(events[3]?.data).toMatchObject({ action: 'escalate', key: 'd-1:1', wait: { for: 'human', timeoutMs: 86_400_000 } });
      expect(settled.kind === 'ended' && settled.outcome).toMatchObject({ status: 'done', answer: 'refunded after approval' });
      // The model saw its question and the person's answer.
      const second = requests[1]?.messages.map((m) => m.content) ?? [];
      expect(second).toContain(JSON.stringify({ action: 'escalate', input: { question: 'May I refund 120 EUR?', reason: 'a refund over the limit', context: { order: 'A-1' } } }));
      expect(second).toContain('Answer from a person:\nYes, refund it');
      expect(runSteps(events).map((step) => step.state)).toContain('awaitingHuman');
      expect(runDetails(events).iterations[0]?.exchange).toMatchObject({ kind: 'escalate', status: 'answered', answer: 'Yes, refund it' });
      expect(pathProblem(events)).toBeUndefined();
    } finally {
      await actors.close();
    }
  });

  it('should end escalate with the question when nobody answers an escalation in time', async () => {
    const { env, actors } = environment([escalate]);
    try {
      const { settled, events } = await drive(env, []);
      if (settled.kind !== 'ended') throw new Error('unreachable');
      expect(settled.outcome).toMatchObject({
        status: 'escalate',
        reason: 'escalated',
        question: { action: 'escalate', question: 'May I refund 120 EUR?', reason: 'a refund over the limit' },
        error: { code: ErrorCode.HUMAN_ANSWER_MISSING },
      });
      expect(exitCodeOf(settled.outcome)).toBe(ExitCode.Escalated);
      expect(events.at(-1)?.type).toBe('run.completed');
      expect(pathProblem(events)).toBeUndefined();
    } finally {
      await actors.close();
    }
  });

  it('should end escalate (info_requested) when a request for information is not answered', async () => {
    const { env, actors } = environment([requestInfo]);
    try {
      const { settled } = await drive(env, []);
      if (settled.kind !== 'ended') throw new Error('unreachable');
      expect(settled.outcome).toMatchObject({ status: 'escalate', reason: 'info_requested', question: { action: 'request_info', question: 'Which order do you mean?' } });
    } finally {
      await actors.close();
    }
  });

  it('should take one answer per question, and refuse an approval for it', async () => {
    const { env, actors } = environment([requestInfo, answer.final('ok')]);
    try {
      const parked = await settleRun(startRun({ ...env, input: 'x', traceId: 'd-1' }));
      expect(parked.kind).toBe('waiting');
      await expect(answerWaitingRun({ ...env, traceId: 'd-1', answer: { kind: 'approval', approved: true } })).rejects.toMatchObject({ code: ErrorCode.RUN_NOT_WAITING });
      await expect(answerWaitingRun({ ...env, traceId: 'd-1', answer: { kind: 'human', text: 'A-1', idempotencyKey: 'd-1:9' } })).rejects.toMatchObject({
        code: ErrorCode.WAIT_ANSWER_MISMATCH,
      });
      const done = await settleRun(await answerWaitingRun({ ...env, traceId: 'd-1', answer: { kind: 'human', text: 'A-1', idempotencyKey: 'd-1:1' } }));
      expect(done.kind).toBe('ended');
      await expect(answerWaitingRun({ ...env, traceId: 'd-1', answer: { kind: 'human', text: 'again' } })).rejects.toMatchObject({ code: ErrorCode.RUN_ALREADY_FINISHED });
    } finally {
      await actors.close();
    }
  });

  it('should stop at the iteration limit after an answer, as after a tool call', async () => {
    const { env, actors } = environment([requestInfo], { maxIterations: 1 });
    try {
      const { settled } = await drive(env, ['A-1']);
      expect(settled.kind === 'ended' && settled.outcome).toMatchObject({ status: 'escalate', reason: 'iteration_limit' });
    } finally {
      await actors.close();
    }
  });
});

describe('delegate: the task handed to another agent', () => {
  it('should end the run delegate with the handoff (exit code 4)', async () => {
    const { env, actors } = environment([delegate]);
    try {
      const { settled, events } = await drive(env, []);
      if (settled.kind !== 'ended') throw new Error('unreachable');
      expect(settled.outcome).toEqual({ status: 'delegate', reason: 'delegated', handoff: { agentId: 'billing', task: 'refund order A-1' }, answer: 'billing handles refunds' });
      expect(exitCodeOf(settled.outcome)).toBe(ExitCode.Delegated);
      expect(settled.envelope.observability.events.at(-1)).toMatchObject({ iteration: 1, action: 'delegate' });
      expect(settled.envelope.state).toMatchObject({ lastAction: 'delegate', completed: true });
      expect(runDetails(events).iterations[0]?.model?.verdict).toEqual({ kind: 'delegate', agentId: 'billing' });
      expect(pathProblem(events)).toBeUndefined();
    } finally {
      await actors.close();
    }
  });

  it('should refuse a delegation without a task', async () => {
    const { env, actors } = environment([{ action: 'delegate', input: { agent_id: 'billing' } }]);
    try {
      const { settled } = await drive(env, []);
      expect(settled.kind === 'ended' && settled.outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: ErrorCode.ANSWER_SCHEMA_MISMATCH } });
    } finally {
      await actors.close();
    }
  });
});

describe('explicit reasoning: thought, reflection and decision', () => {
  const reasoned = (action: object, extra: object = {}) => ({ ...action, thought: 'I need the order first', ...extra });

  it('should refuse an answer without a thought (THOUGHT_MISSING)', async () => {
    const { env, actors } = environment([answer.tool('echo', { text: 'x' })], { reasoning: 'explicit' });
    try {
      const { settled } = await drive(env, []);
      expect(settled.kind === 'ended' && settled.outcome.error?.code).toBe(ErrorCode.THOUGHT_MISSING);
    } finally {
      await actors.close();
    }
  });

  it('should refuse an answer after an observation without a reflection, or without a decision', async () => {
    for (const [second, code] of [
      [reasoned(answer.final('done'), { decision: 'done' }), ErrorCode.REFLECTION_MISSING],
      [reasoned(answer.final('done'), { reflection: 'the echo is enough' }), ErrorCode.DECISION_MISSING],
      [reasoned(answer.final('done'), { reflection: 'the echo is enough', decision: 'continue' }), ErrorCode.DECISION_MISMATCH],
    ] as const) {
      const { env, actors } = environment([reasoned(answer.tool('echo', { text: 'x' })), second], { reasoning: 'explicit' });
      try {
        const { settled } = await drive(env, []);
        expect(settled.kind === 'ended' && settled.outcome.error?.code).toBe(code);
      } finally {
        await actors.close();
      }
    }
  });

  it('should accept reasoned answers and keep the thought and the reflection out of the log, resuming to the same verdict', async () => {
    const answers = [
      reasoned(answer.tool('echo', { text: 'x' })),
      reasoned(answer.final('the echo said x'), { reflection: 'the echo is enough', decision: 'done', reason: 'nothing is missing' }),
    ];
    const { env, actors } = environment(answers, { reasoning: 'explicit' });
    try {
      const { settled, events } = await drive(env, []);
      expect(settled.kind === 'ended' && settled.outcome).toMatchObject({ status: 'done', answer: 'the echo said x' });
      const log = JSON.stringify(events);
      expect(log).not.toContain('I need the order first');
      expect(log).not.toContain('the echo is enough');
      expect(log).toContain('nothing is missing');
      // Resumed where the second answer is logged but not judged: judged the same, though its reasoning is not in the log.
      const cut = events.findIndex((e, i) => e.type === 'model.answered' && i > 3) + 1;
      const status = logStatus(events.slice(0, cut));
      expect(status.kind === 'resumable' && status.point).toMatchObject({ at: 'validating', reasoningHidden: true });
      const store = createMemoryEventStore();
      for (const event of events.slice(0, cut)) await store.append(event);
      const resumed = await resumeRun({ ...env, store, events: events.slice(0, cut) }).result;
      expect(resumed.outcome).toEqual(settled.kind === 'ended' ? settled.outcome : undefined);
    } finally {
      await actors.close();
    }
  });
});

describe('structured output: the final answer checked against the outputSchema', () => {
  it('should return a valid output typed and validated', async () => {
    const { env, actors } = environment([{ action: 'final', output: { summary: 'all good' } }], { outputSchema: summarySchema });
    try {
      const { settled } = await drive(env, []);
      expect(settled.kind === 'ended' && settled.outcome).toEqual({
        status: 'done',
        reason: 'final_answer',
        answer: '{"summary":"all good"}',
        output: { summary: 'all good' },
        validated: true,
      });
    } finally {
      await actors.close();
    }
  });

  it('should read a JSON message as the output when the answer has no output', async () => {
    const { env, actors } = environment([answer.final('{"summary":"from the message"}')], { outputSchema: summarySchema });
    try {
      const { settled } = await drive(env, []);
      expect(settled.kind === 'ended' && settled.outcome).toMatchObject({ status: 'done', output: { summary: 'from the message' }, validated: true });
    } finally {
      await actors.close();
    }
  });

  it('should end done with the raw output and validated false when it does not match, never failing the run', async () => {
    const { env, actors } = environment([{ action: 'final', message: 'here', output: { summary: 3, extra: true } }], { outputSchema: summarySchema });
    try {
      const { settled, events } = await drive(env, []);
      if (settled.kind !== 'ended') throw new Error('unreachable');
      expect(settled.outcome).toMatchObject({ status: 'done', reason: 'final_answer', answer: 'here', output: { summary: 3, extra: true }, validated: false });
      expect(settled.outcome.outputErrors).toEqual(expect.arrayContaining(['/summary must be string', "(root) has unknown property 'extra'"]));
      expect(exitCodeOf(settled.outcome)).toBe(ExitCode.Ok);
      expect(events.map((e) => e.type)).not.toContain('output.rejected');
    } finally {
      await actors.close();
    }
  });

  it('should send an invalid output back once with its errors (outputRepair), and take the corrected one', async () => {
    const { env, actors, requests } = environment(
      [
        { action: 'final', output: { summary: 3 } },
        { action: 'final', output: { summary: 'three' } },
      ],
      { outputSchema: summarySchema, outputRepair: true },
    );
    try {
      const { settled, events } = await drive(env, []);
      expect(settled.kind === 'ended' && settled.outcome).toMatchObject({ status: 'done', output: { summary: 'three' }, validated: true });
      expect(events.map((e) => e.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'output.rejected', 'model.requested', 'model.answered', 'run.completed']);
      expect(events[3]?.data).toEqual({ output: { summary: 3 }, errors: ['/summary must be string'] });
      expect(requests[1]?.messages.at(-1)?.content).toContain('/summary must be string');
      expect(pathProblem(events)).toBeUndefined();
    } finally {
      await actors.close();
    }
  });

  it('should repair once only, and not at the iteration limit', async () => {
    const twice = environment(
      [
        { action: 'final', output: {} },
        { action: 'final', output: { summary: 1 } },
      ],
      { outputSchema: summarySchema, outputRepair: true },
    );
    const atLimit = environment([{ action: 'final', output: {} }], { outputSchema: summarySchema, outputRepair: true, maxIterations: 1 });
    try {
      const first = await drive(twice.env, []);
      expect(first.settled.kind === 'ended' && first.settled.outcome).toMatchObject({ status: 'done', validated: false, output: { summary: 1 } });
      expect(first.events.filter((e) => e.type === 'output.rejected')).toHaveLength(1);
      const second = await drive(atLimit.env, []);
      expect(second.settled.kind === 'ended' && second.settled.outcome).toMatchObject({ status: 'done', validated: false });
      expect(second.events.map((e) => e.type)).not.toContain('output.rejected');
    } finally {
      await twice.actors.close();
      await atLimit.actors.close();
    }
  });
});

describe('resume and replay with the new actions', () => {
  it('should resume from every prefix of a log with a question, a tool call, a repair and a delegation to the same outcome and envelope', async () => {
    const answers = [
      requestInfo,
      answer.tool('echo', { text: 'A-1' }),
      { action: 'final', output: { summary: 4 } },
      delegate,
    ];
    const agent = { outputSchema: summarySchema, outputRepair: true };
    const whole = environment(answers, agent);
    let reference: Awaited<ReturnType<typeof drive>>;
    try {
      reference = await drive(whole.env, ['order A-1']);
    } finally {
      await whole.actors.close();
    }
    if (reference.settled.kind !== 'ended') throw new Error('unreachable');
    expect(reference.settled.outcome.status).toBe('delegate');
    const types = reference.events.map((e) => e.type);
    for (const type of ['human.requested', 'human.answered', 'tool.completed', 'output.rejected', 'run.completed'] as const) expect(types).toContain(type);
    for (let cut = 1; cut < reference.events.length; cut++) {
      const prefix = reference.events.slice(0, cut);
      // The scripted model answers by iteration, so a resumed run hears the same answers.
      const again = environment(answers, agent);
      try {
        for (const event of prefix) await again.store.append(event);
        const asked = prefix.some((e) => e.type === 'human.answered') ? [] : ['order A-1'];
        const resumed = await drive(again.env, asked, resumeRun({ ...again.env, events: prefix }));
        expect(resumed.settled.kind === 'ended' && resumed.settled.outcome, `cut at ${cut}`).toEqual(reference.settled.outcome);
        expect(pathProblem(resumed.events), `cut at ${cut}`).toBeUndefined();
        // Resumed or not, the run made the same steps (run.resumed aside).
        expect(resumed.events.filter((e) => e.type !== 'run.resumed').map((e) => e.type), `cut at ${cut}`).toEqual(types.filter((t) => t !== 'run.resumed'));
      } finally {
        await again.actors.close();
      }
    }
  });
});
