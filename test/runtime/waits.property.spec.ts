import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../src/contracts/schema-types.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createMemoryEventStore, type MemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { createRunPathCheck } from '../../src/events/runPath.js';
import type { RunWait, WaitAnswer } from '../../src/events/pendingWait.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';
import type { RunHandle } from '../../src/runtime/runSession.js';
import { answerWaitingRun, settleRun, type RunSettlement } from '../../src/host/answerWaitingRun.js';
import { ErrorCode } from '../../src/errors.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';

const ask: ToolSpec = { name: 'ask', description: 'the client answers', inputSchema: { type: 'object' }, executor: 'client' };

/** How a scripted person and client answer each wait, by its kind and its call's iteration. */
interface Answerer {
  approve: readonly boolean[];
  clientOk: readonly boolean[];
  /** The iteration whose wait nobody answers: its deadline passes. */
  expireAt: number | undefined;
}

function answerFor(wait: RunWait, answerer: Answerer): WaitAnswer {
  if (answerer.expireAt === wait.iteration) return { kind: 'expire' };
  if (wait.kind === 'human') return { kind: 'human', text: `answer ${wait.iteration}` };
  const pick = (list: readonly boolean[]) => list[wait.iteration % list.length] ?? true;
  if (wait.kind === 'approval') return { kind: 'approval', approved: pick(answerer.approve), reason: `decided at ${wait.iteration}` };
  return pick(answerer.clientOk)
    ? { kind: 'client', result: { ok: true, output: { iteration: wait.iteration } } }
    : { kind: 'client', result: { ok: false, error: { code: ErrorCode.TOOL_FAILED, message: 'the client gave up' } } };
}

/**
 * Runs (or resumes, from `prefix`) a run with waits to its end, answering each wait as the
 * answerer says; checks after each settlement that the live envelope is the fold of the log.
 */
async function drive(answers: readonly unknown[], requiresApproval: string[], answerer: Answerer, prefix?: readonly AgentEvent[], repair = false) {
  const echo = countingTool();
  const actors = serveActors({ model: createScriptedModel(answers), tools: [echo.tool] });
  const store: MemoryEventStore = createMemoryEventStore();
  for (const event of prefix ?? []) await store.append(event);
  const output = repair ? { outputSchema: { type: 'object', required: ['n'] }, outputRepair: true } : {};
  const env = { ...actors, tools: [...actors.tools, ask], agent: agentConfig({ allowedTools: ['echo', 'ask'], requiresApproval, ...output }), store };
  try {
    let handle: RunHandle = prefix ? resumeRun({ ...env, events: prefix }) : startRun({ ...env, input: 'go', traceId: 'w' });
    let waits = 0;
    for (;;) {
      const settled: RunSettlement = await settleRun(handle);
      const events = (await store.read('w')).events;
      expect(fold(events)).toEqual(settled.envelope);
      if (settled.kind === 'ended') return { settled, events, echoCalls: echo.calls.length };
      handle = await answerWaitingRun({ ...env, traceId: 'w', answer: answerFor(settled.wait, answerer) });
      waits += 1;
      expect(waits).toBeLessThan(50);
    }
  } finally {
    await actors.close();
  }
}

function pathProblem(events: readonly AgentEvent[]): string | undefined {
  const check = createRunPathCheck();
  for (const event of events) {
    const why = check.next(event);
    if (why) return `seq ${event.seq}: ${why}`;
  }
  return undefined;
}

const anyAnswer = fc.oneof(
  fc.constant(answer.final('f')),
  fc.constant(answer.tool('echo', { text: 'x' })),
  fc.constant(answer.tool('ask', { q: 1 })),
  fc.constant('oops'),
  fc.constant({ action: 'escalate', input: { reason: 'unsure', question: 'go on?' } }),
  fc.constant({ action: 'request_info', input: { question: 'which one?' } }),
  fc.constant({ action: 'delegate', input: { agent_id: 'other', task: 'do it' } }),
  fc.constant({ action: 'final', output: { n: 1 } }),
  fc.constant({ action: 'final', output: { m: 1 } }),
);
const anyAnswerer = fc.record({
  approve: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
  clientOk: fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
  expireAt: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
});

describe('runs that wait for answers from outside (property)', () => {
  it('should keep the log a path the statechart can take, make no denied call, and agree with any resume', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(anyAnswer, { minLength: 1, maxLength: 6 }),
        fc.subarray(['echo', 'ask']),
        anyAnswerer,
        fc.nat(),
        fc.boolean(),
        async (answers, requiresApproval, answerer, at, repair) => {
          const whole = await drive(answers, requiresApproval, answerer, undefined, repair);
          expect(pathProblem(whole.events)).toBeUndefined();
          // Every echo call made was approved, or needed no approval; no denied call was made.
          const requested = whole.events.filter((e) => e.type === 'tool.requested' && e.data.tool === 'echo').length;
          const denied = whole.events.filter((e) => e.type === 'tool.denied' && e.data.tool === 'echo').length;
          const unanswered = whole.settled.outcome.reason === 'wait_expired' || whole.settled.outcome.reason === 'aborted' ? 1 : 0;
          expect(whole.echoCalls).toBeGreaterThanOrEqual(requested - denied - unanswered);
          expect(whole.echoCalls).toBeLessThanOrEqual(requested - denied);
          // Cut anywhere and resumed with the same answers, the run ends the same way.
          const cut = 1 + (at % whole.events.length);
          const resumed = await drive(answers, requiresApproval, answerer, whole.events.slice(0, cut), repair);
          expect(resumed.settled.outcome).toEqual(whole.settled.outcome);
          expect(resumed.settled.envelope.observability.outcome).toEqual(whole.settled.envelope.observability.outcome);
          expect(pathProblem(resumed.events)).toBeUndefined();
        },
      ),
      { numRuns: 60 },
    );
  });
});
