import { describe, expect, it } from 'vitest';
import type { AgentCoreReactConfig } from '../../src/contracts/schema-types.js';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { createRunPathCheck } from '../../src/events/runPath.js';
import { runDetails } from '../../src/machines/stepDetails.js';
import { runSteps } from '../../src/machines/runSteps.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { ErrorCode } from '../../src/errors.js';
import { registerSecret } from '../../src/secrets/secrets.js';
import { runToEnd } from '../support/runToEnd.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

/** A scripted model that keeps what it was sent. */
function recordingModel(answers: readonly unknown[]): { model: ModelActor; requests: ModelRequest[] } {
  const inner = createScriptedModel(answers);
  const requests: ModelRequest[] = [];
  return { requests, model: { kind: inner.kind, complete: (request, signal, options) => (requests.push(request), inner.complete(request, signal, options)) } };
}

function environment(answers: readonly unknown[], agent: Partial<AgentCoreReactConfig> = {}) {
  const { model, requests } = recordingModel(answers);
  const actors = serveActors({ model, tools: [countingTool().tool] });
  const store = createMemoryEventStore();
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

/** Runs to its end; the live envelope must be the fold of the log. */
async function run(answers: readonly unknown[], agent: Partial<AgentCoreReactConfig> = {}, prefix?: readonly AgentEvent[]) {
  const { env, actors, store, requests } = environment(answers, agent);
  try {
    const { outcome, events } = await runToEnd({ ...env, store }, prefix);
    return { outcome, events, requests };
  } finally {
    await actors.close();
  }
}

const types = (events: readonly AgentEvent[]) => events.map((event) => event.type);

/** One answer per invalid-answer code the validation gives (the echo tool takes `{ text?: string }` only). */
const INVALID: ReadonlyArray<readonly [string, unknown]> = [
  [ErrorCode.INVALID_JSON, 'Sure! The order shipped.'],
  [ErrorCode.ANSWER_NOT_OBJECT, '[1, 2]'],
  [ErrorCode.ACTION_MISSING, { message: 'hi' }],
  [ErrorCode.ACTION_UNKNOWN, { action: 'dance' }],
  [ErrorCode.TOOL_NOT_ALLOWED, answer.tool('rm_rf')],
  [ErrorCode.TOOL_INPUT_INVALID, answer.tool('echo', { n: 1 })],
  [ErrorCode.TOOL_MISSING, { action: 'tool', input: {}, confidence: 0.5 }],
  [ErrorCode.CONFIDENCE_MISSING, { action: 'tool', tool: 'echo', input: {} }],
  [ErrorCode.CONFIDENCE_OUT_OF_RANGE, answer.tool('echo', {}, 7)],
  [ErrorCode.FINAL_MESSAGE_MISSING, { action: 'final' }],
  [ErrorCode.DECISION_MISMATCH, { action: 'final', message: 'ok', decision: 'continue' }],
  [ErrorCode.ANSWER_SCHEMA_MISMATCH, { action: 'final', message: 'ok', extra: 1 }],
];

describe('an invalid answer with repair off (the default)', () => {
  it.each(INVALID)('should end the run blocked with %s at once, as before', async (code, bad) => {
    const { outcome, events } = await run([bad, answer.final('never asked')]);
    expect(outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code } });
    expect(types(events)).toEqual(['run.started', 'model.requested', 'model.answered', 'run.failed']);
  });
});

describe('an invalid answer with onInvalidAnswer.repair', () => {
  it.each(INVALID)('should send a %s answer back with its error and take the valid one that follows', async (code, bad) => {
    const { outcome, events, requests } = await run([bad, answer.final('A-1 shipped')], { onInvalidAnswer: { repair: 1 } });
    expect(outcome).toMatchObject({ status: 'done', answer: 'A-1 shipped' });
    expect(types(events)).toEqual(['run.started', 'model.requested', 'model.answered', 'answer.rejected', 'model.requested', 'model.answered', 'run.completed']);
    const rejected = events[3] as Extract<AgentEvent, { type: 'answer.rejected' }>;
    expect(rejected.data.error.code).toBe(code);
    expect(rejected.data.text).toBe(typeof bad === 'string' ? bad : JSON.stringify(bad));
    // The model's next observation says what was wrong and what a valid answer looks like.
    const shown = requests[1]?.messages.at(-1);
    expect(shown?.role).toBe('user');
    expect(shown?.content).toContain(code);
    expect(shown?.content).toContain('{"action":"final","message":');
    expect(requests[1]?.messages.at(-2)).toEqual({ role: 'assistant', content: rejected.data.text });
    expect(pathProblem(events)).toBeUndefined();
  });

  it('should end blocked with the last code once the repairs are used up', async () => {
    const { outcome, events } = await run(['nope', '{"action":"dance"}', 'still nope', answer.final('late')], { onInvalidAnswer: { repair: 2 } });
    expect(outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: ErrorCode.INVALID_JSON } });
    expect(types(events).filter((type) => type === 'answer.rejected')).toHaveLength(2);
    expect(types(events).at(-1)).toBe('run.failed');
    expect(events.filter((e) => e.type === 'model.requested')).toHaveLength(3);
    expect(pathProblem(events)).toBeUndefined();
  });

  it('should count each repair as an iteration: none is made at the iteration limit', async () => {
    const { outcome, events } = await run(['nope', answer.final('A-1 shipped')], { onInvalidAnswer: { repair: 3 }, maxIterations: 1 });
    expect(outcome).toMatchObject({ status: 'blocked', error: { code: ErrorCode.INVALID_JSON } });
    expect(types(events)).not.toContain('answer.rejected');
  });

  it('should keep at most 2,000 characters of the rejected answer, with its length', async () => {
    const long = `no json here ${'x'.repeat(5_000)}`;
    const { events } = await run([long, answer.final('ok')], { onInvalidAnswer: { repair: 1 } });
    const rejected = events.find((e) => e.type === 'answer.rejected') as Extract<AgentEvent, { type: 'answer.rejected' }>;
    expect(rejected.data.text).toHaveLength(2_000);
    expect(rejected.data.originalLength).toBe(long.length);
  });

  it('should keep a secret out of the rejected answer and its error', async () => {
    const secret = 'sk-repair-0123456789abcdef';
    registerSecret(secret);
    const { events, requests } = await run([`here is the key ${secret} !`, answer.final('ok')], { onInvalidAnswer: { repair: 1 } });
    const rejected = events.find((e) => e.type === 'answer.rejected');
    expect(JSON.stringify(rejected)).not.toContain(secret);
    expect(JSON.stringify(rejected)).toContain('[redacted]');
    expect(JSON.stringify(requests[1]?.messages)).not.toContain(secret);
  });

  it('should mark the rejected answer in the step details and the timeline', async () => {
    const { events } = await run(['nope', answer.final('A-1 shipped')], { onInvalidAnswer: { repair: 1 } });
    const details = runDetails(events);
    expect(details.iterations[0]?.model?.verdict).toMatchObject({ kind: 'rejected', repaired: true, error: { code: ErrorCode.INVALID_JSON } });
    expect(details.iterations[0]?.failure).toMatchObject({ step: 'answer', error: { code: ErrorCode.INVALID_JSON } });
    expect(details.iterations[0]?.exchange).toMatchObject({ kind: 'answer_repair', answer: 'nope', error: { code: ErrorCode.INVALID_JSON } });
    expect(details.iterations[1]?.model?.verdict).toEqual({ kind: 'final' });
    expect(fold(events).observability.events[0]).toMatchObject({ iteration: 1, action: 'error', code: ErrorCode.INVALID_JSON });
    // The statechart's state after answer.rejected: asking the model again.
    expect(runSteps(events)[3]?.state).toBe('awaitingModel');
  });

  it('should resume from every prefix of a repaired run to the same outcome, steps and requests', async () => {
    const answers = ['nope', answer.tool('echo', { text: 'A-1' }), '{"action":"final"}', answer.final('A-1 shipped')];
    const agent = { onInvalidAnswer: { repair: 2 } };
    const reference = await run(answers, agent);
    expect(reference.outcome).toMatchObject({ status: 'done', answer: 'A-1 shipped' });
    expect(types(reference.events).filter((type) => type === 'answer.rejected')).toHaveLength(2);
    for (let cut = 1; cut < reference.events.length; cut++) {
      const resumed = await run(answers, agent, reference.events.slice(0, cut));
      expect(resumed.outcome, `cut at ${cut}`).toEqual(reference.outcome);
      expect(pathProblem(resumed.events), `cut at ${cut}`).toBeUndefined();
      expect(types(resumed.events).filter((type) => type !== 'run.resumed'), `cut at ${cut}`).toEqual(types(reference.events));
      // A resumed run re-asks exactly as the live one did: the same messages for each iteration it asks.
      for (const request of resumed.requests) {
        const live = reference.requests.find((r) => r.iteration === request.iteration);
        expect(request.messages, `cut at ${cut}, iteration ${request.iteration}`).toEqual(live?.messages);
      }
    }
  });
});
