import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createInProcessMemoryStore } from '../../src/actors/memory/inProcessMemoryStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { logStatus } from '../../src/events/resumePoint.js';
import { createRunPathCheck } from '../../src/events/runPath.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun } from '../../src/runtime/runAgent.js';
import { ErrorCode } from '../../src/errors.js';
import { agentConfig, answer, countingTool, runScripted } from '../support/harness.js';

/** The first event the check refuses, and why; undefined when the whole log passes. */
function firstRefused(events: readonly AgentEvent[]): { seq: number; why: string } | undefined {
  const check = createRunPathCheck();
  for (const event of events) {
    const why = check.next(event);
    if (why !== undefined) return { seq: event.seq, why };
  }
  return undefined;
}

/** `events` with `extra` put after index `at`, renumbered so only the path can tell. */
function inserted(events: readonly AgentEvent[], at: number, extra: AgentEvent): AgentEvent[] {
  const all = [...events.slice(0, at + 1), extra, ...events.slice(at + 1)];
  return all.map((event, i) => ({ ...event, seq: i + 1, id: `${event.traceId}:${i + 1}` }) as AgentEvent);
}

/** One answer of any kind a model could give: a tool call, a final answer, or something invalid. */
const anyAnswer = fc.oneof(
  fc.constant(answer.tool('echo', { text: 'x' }, 0.4)),
  fc.constant(answer.tool('echo', { text: 'y' }, 0.95)),
  fc.constant(answer.final('done')),
  fc.constant(answer.tool('not_allowed')),
  fc.constant('not json'),
);

const scenarios = fc.record({
  answers: fc.array(anyAnswer, { minLength: 0, maxLength: 6 }),
  maxIterations: fc.integer({ min: 1, max: 4 }),
  threshold: fc.option(fc.constantFrom(0.9), { nil: undefined }),
  conversation: fc.boolean(),
  failingTool: fc.boolean(),
});

type Scenario = typeof scenarios extends fc.Arbitrary<infer T> ? T : never;

/** The log the machine writes for a scenario. */
async function logOf(scenario: Scenario): Promise<AgentEvent[]> {
  const tool = countingTool('echo', (input) => {
    if (scenario.failingTool) throw new Error('tool down');
    return input;
  }).tool;
  const { events } = await runScripted({
    answers: scenario.answers,
    tools: [tool],
    agent: agentConfig({
      maxIterations: scenario.maxIterations,
      ...(scenario.threshold !== undefined && { stopConditions: [{ type: 'confidence_threshold', value: scenario.threshold }] }),
    }),
    ...(scenario.conversation && { conversationId: 'c1', memoryStore: createInProcessMemoryStore() }),
  });
  return events;
}

describe('the run path check', () => {
  it('should accept every log the statechart writes, and every prefix of it', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, async (scenario) => {
        const events = await logOf(scenario);
        expect(firstRefused(events)).toBeUndefined();
        for (let k = 1; k < events.length; k++) expect(firstRefused(events.slice(0, k))).toBeUndefined();
      }),
      { numRuns: 150 },
    );
  });

  it('should refuse any event repeated right after itself, and anything after the ending', async () => {
    await fc.assert(
      fc.asyncProperty(scenarios, fc.nat(), fc.nat(), async (scenario, pick, other) => {
        const events = await logOf(scenario);
        const at = pick % events.length;
        expect(firstRefused(inserted(events, at, events[at]!))?.seq).toBe(at + 2);
        const last = events.length - 1;
        expect(firstRefused(inserted(events, last, events[other % events.length]!))?.why).toMatch(/nothing may follow the run's ending|seq/);
      }),
      { numRuns: 150 },
    );
  });

  it('should refuse a tool call outside allowedTools, a result for another call, and an iteration past maxIterations', async () => {
    const { events } = await runScripted({ answers: [answer.tool('echo', { text: 'a' }), answer.final('ok')] });
    const requested = events.findIndex((event) => event.type === 'tool.requested');
    const request = events[requested] as AgentEvent & { type: 'tool.requested' };
    const forgedTool = [...events.slice(0, requested), { ...request, data: { ...request.data, tool: 'rm_rf' } } as AgentEvent];
    expect(firstRefused(forgedTool)?.why).toContain('not in the agent\'s allowedTools');

    const completed = events[requested + 1] as AgentEvent & { type: 'tool.completed' };
    const otherCall = [...events.slice(0, requested + 1), { ...completed, data: { ...completed.data, idempotencyKey: 'trace-1:9' } } as AgentEvent];
    expect(firstRefused(otherCall)?.why).toContain('not the call requested');

    const limited = await runScripted({ answers: [answer.tool('echo'), answer.tool('echo')], agent: agentConfig({ maxIterations: 1 }) });
    const next = { ...events[1]!, seq: limited.events.length, id: `trace-1:${limited.events.length}`, iteration: 2 } as AgentEvent;
    const beyond = [...limited.events.slice(0, -1), next];
    expect(firstRefused(beyond)?.why).toMatch(/past maxIterations/);
  });

  it("should take a tool.attached for the call in flight only, and resume that call with its handle", async () => {
    const { events } = await runScripted({ answers: [answer.tool('echo', { text: 'a' }), answer.final('ok')] });
    const requested = events.findIndex((event) => event.type === 'tool.requested');
    const request = events[requested] as AgentEvent & { type: 'tool.requested' };
    const attached = { ...request, type: 'tool.attached', data: { tool: 'echo', idempotencyKey: request.data.idempotencyKey, handle: { taskId: 'task-7' } } } as AgentEvent;
    // After the request, before the result: a path the statechart takes.
    expect(firstRefused(inserted(events, requested, attached))).toBeUndefined();
    // A resumed run re-sends the call with the handle it logged.
    const cut = inserted(events, requested, attached).slice(0, requested + 2);
    const status = logStatus(cut);
    expect(status.kind === 'resumable' && { at: status.point.at, attached: status.point.attached }).toEqual({ at: 'toolResend', attached: attached.data });
    // Not for another call, and not before any call.
    const forOther = { ...attached, data: { ...attached.data, idempotencyKey: 'trace-1:9' } } as AgentEvent;
    expect(firstRefused(inserted(events, requested, forOther))?.why).toContain('not the call requested');
    expect(firstRefused(inserted(events, requested - 1, attached))?.why).toContain('tool.attached cannot follow model.answered');
  });

  it('should refuse the ending of a run with a conversation that did not save its turn', async () => {
    const { events } = await runScripted({ answers: [answer.final('ok')], conversationId: 'c1' });
    const withoutSave = events.filter((event) => !event.type.startsWith('memory.')).map((event, i) => ({ ...event, seq: i + 1, id: `trace-1:${i + 1}` }) as AgentEvent);
    expect(firstRefused(withoutSave)?.why).toContain('saves its turn before it ends');
  });

  it('should make resume refuse an impossible log with LOG_PATH_INVALID, calling no tool', async () => {
    const { events } = await runScripted({ answers: [answer.tool('echo', { text: 'a' }), answer.final('ok')] });
    const requested = events.findIndex((event) => event.type === 'tool.requested');
    const request = events[requested] as AgentEvent & { type: 'tool.requested' };
    const log = [...events.slice(0, requested), { ...request, data: { ...request.data, tool: 'rm_rf' } } as AgentEvent];
    expect(() => logStatus(log)).toThrow(expect.objectContaining({ code: ErrorCode.LOG_PATH_INVALID }));
    const rm = countingTool('rm_rf');
    const actors = serveActors({ model: createScriptedModel([answer.final('x')]), tools: [rm.tool] });
    try {
      expect(() => resumeRun({ ...actors, agent: agentConfig(), store: createMemoryEventStore(), events: log })).toThrow(
        expect.objectContaining({ code: ErrorCode.LOG_PATH_INVALID }),
      );
      expect(rm.calls).toEqual([]);
    } finally {
      await actors.close();
    }
  });
});
