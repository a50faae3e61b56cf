import { describe, expect, it } from 'vitest';
import type { AgentCoreReactConfig } from '../../src/contracts/schema-types.js';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { createRunPathCheck } from '../../src/events/runPath.js';
import { runSteps } from '../../src/machines/runSteps.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { ErrorCode } from '../../src/errors.js';
import { runToEnd } from '../support/runToEnd.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

type Check = { name: string; passed: boolean; basis: string };

/** A verifier's answer: every check passed but those named in `failing`. */
export function verdict(failing: readonly string[] = []): { checks: Check[] } {
  return {
    checks: ['completeness', 'consistency', 'correctness', 'constraints'].map((name) => ({
      name,
      passed: !failing.includes(name),
      basis: failing.includes(name) ? `the ${name} check found a gap` : `the ${name} check holds`,
    })),
  };
}

function recordingModel(answers: readonly unknown[], verifications: Record<number, unknown>): { model: ModelActor; requests: ModelRequest[] } {
  const inner = createScriptedModel(answers, { verifications });
  const requests: ModelRequest[] = [];
  return { requests, model: { kind: inner.kind, complete: (request, signal, options) => (requests.push(request), inner.complete(request, signal, options)) } };
}

function pathProblem(events: readonly AgentEvent[]): string | undefined {
  const check = createRunPathCheck();
  for (const event of events) {
    const why = check.next(event);
    if (why) return `seq ${event.seq}: ${why}`;
  }
  return undefined;
}

/** Runs to its end (from `prefix` of a log when given); the live envelope must be the fold of the log. */
async function run(answers: readonly unknown[], verifications: Record<number, unknown>, agent: Partial<AgentCoreReactConfig>, prefix?: readonly AgentEvent[]) {
  const { model, requests } = recordingModel(answers, verifications);
  const actors = serveActors({ model, tools: [countingTool().tool] });
  const store = createMemoryEventStore();
  const env = { ...actors, agent: agentConfig(agent), store, clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z'), 1) };
  try {
    const { outcome, events } = await runToEnd({ ...env, store }, prefix);
    expect(pathProblem(events)).toBeUndefined();
    return { outcome, events, requests };
  } finally {
    await actors.close();
  }
}

const types = (events: readonly AgentEvent[]) => events.filter((event) => event.type !== 'run.resumed').map((event) => event.type);

describe('verification before the final answer', () => {
  it('should end done with the verification in the outcome when all four checks pass', async () => {
    const { outcome, events, requests } = await run([answer.tool('echo', { text: 'A-1' }), answer.final('A-1 shipped')], { 2: verdict() }, { verification: 'self' });
    expect(outcome).toMatchObject({ status: 'done', reason: 'final_answer', answer: 'A-1 shipped', verification: { passed: true, failures: 0 } });
    expect(outcome.verification?.checks.map((check) => check.name)).toEqual(['completeness', 'consistency', 'correctness', 'constraints']);
    expect(types(events)).toEqual(['run.started', 'model.requested', 'model.answered', 'tool.requested', 'tool.completed', 'model.requested', 'model.answered', 'verification.requested', 'verification.completed', 'run.completed']);
    // The verifier is asked about the run's input, its observation and the answer, in its own shape.
    const verification = requests.find((request) => request.purpose === 'verification');
    expect(verification?.messages[0]?.content).toContain('completeness');
    expect(verification?.messages[1]?.content).toMatch(/which order shipped\?[\s\S]*echo\(\{"text":"A-1"\}\)[\s\S]*A-1 shipped/);
    expect(runSteps(events).map((step) => step.state)).toContain('verifying');
  });

  it('should send a failed verification back as the next observation, and end done once the revised answer passes', async () => {
    const { outcome, events, requests } = await run(
      [answer.final('A-1 shipped'), answer.tool('echo', { text: 'A-1' }), answer.final('A-1 shipped on May 2')],
      { 1: verdict(['correctness']), 3: verdict() },
      { verification: 'self' },
    );
    expect(outcome).toMatchObject({ status: 'done', answer: 'A-1 shipped on May 2', verification: { passed: true, failures: 1 } });
    // Iteration 2's request shows the model its answer and the failed check.
    const revise = requests.find((request) => request.iteration === 2 && request.purpose === undefined);
    expect(revise?.messages.at(-1)?.content).toContain('failed verification:\n- correctness: the correctness check found a gap');
    expect(fold(events).observability.events[0]).toMatchObject({ iteration: 1, action: 'final', code: ErrorCode.VERIFICATION_FAILED });
  });

  it('should end done_partial with the last answer and the failed checks after maxFailures failed verifications', async () => {
    const { outcome, events } = await run(
      [answer.final('draft one'), answer.final('draft two'), answer.final('draft three')],
      { 1: verdict(['completeness']), 2: verdict(['completeness', 'constraints']), 3: verdict() },
      { verification: { maxFailures: 2 } },
    );
    expect(outcome).toMatchObject({
      status: 'done_partial',
      reason: 'verification_failed',
      answer: 'draft two',
      error: { code: ErrorCode.VERIFICATION_FAILED },
      verification: { passed: false, failures: 2 },
    });
    expect(outcome.verification?.checks.filter((check) => !check.passed).map((check) => check.name)).toEqual(['completeness', 'constraints']);
    expect(types(events).filter((type) => type === 'verification.completed')).toHaveLength(2);
  });

  it('should fail a verification whose answer is not the verification shape, with VERIFICATION_INVALID', async () => {
    const { outcome, events } = await run([answer.final('A-1 shipped')], { 1: 'looks good to me' }, { verification: { maxFailures: 1 } });
    expect(outcome).toMatchObject({ status: 'done_partial', reason: 'verification_failed', answer: 'A-1 shipped' });
    const completed = events.find((event) => event.type === 'verification.completed');
    expect(completed?.data).toMatchObject({ passed: false, checks: [], error: { code: ErrorCode.VERIFICATION_INVALID } });
  });

  it('should end done_partial when a failed verification leaves no iteration to revise in', async () => {
    const { outcome } = await run([answer.final('only answer')], { 1: verdict(['consistency']) }, { verification: { maxFailures: 5 }, maxIterations: 1 });
    expect(outcome).toMatchObject({ status: 'done_partial', reason: 'verification_failed', verification: { failures: 1 } });
  });

  it('should put the done criteria and the rubric in the verifier prompt', async () => {
    const { requests } = await run([answer.final('ok')], { 1: verdict() }, { verification: { criteria: ['Every finding names its line'], rubric: 'Findings are ranked by severity.' } });
    const system = requests.find((request) => request.purpose === 'verification')?.messages[0]?.content ?? '';
    expect(system).toContain('Every finding names its line');
    expect(system).toContain('Findings are ranked by severity.');
  });

  it('should not verify when verification is off', async () => {
    const { outcome, events } = await run([answer.final('ok')], {}, { verification: 'off' });
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'ok' });
    expect(types(events)).not.toContain('verification.requested');
  });

  it('should resume from every prefix of a verified run to the same outcome, events and requests', async () => {
    const answers = [answer.final('A-1 shipped'), answer.tool('echo', { text: 'A-1' }), answer.final('A-1 shipped on May 2')];
    const verifications = { 1: verdict(['correctness']), 3: verdict() };
    const reference = await run(answers, verifications, { verification: 'self' });
    for (let cut = 1; cut < reference.events.length; cut++) {
      const resumed = await run(answers, verifications, { verification: 'self' }, reference.events.slice(0, cut));
      expect(resumed.outcome, `cut at ${cut}`).toEqual(reference.outcome);
      expect(types(resumed.events), `cut at ${cut}`).toEqual(types(reference.events));
      for (const request of resumed.requests) {
        const live = reference.requests.find((r) => r.iteration === request.iteration && r.purpose === request.purpose);
        expect(request.messages, `cut at ${cut}, iteration ${request.iteration}`).toEqual(live?.messages);
      }
    }
  });
});

describe('a log with a verification', () => {
  it('should be refused when its agent does not verify: the step is not one the run could take', async () => {
    const { events } = await run([answer.final('ok')], { 1: verdict() }, { verification: 'self' });
    const started = events[0] as Extract<AgentEvent, { type: 'run.started' }>;
    const unverified = [{ ...started, data: { ...started.data, agent: { ...started.data.agent, verification: 'off' as const } } }, ...events.slice(1)];
    expect(pathProblem(unverified)).toMatch(/verification\.requested in a run whose agent does not verify/);
  });
});
