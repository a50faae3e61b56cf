// diffRuns on real run logs: scripted models against real tools in embedded mode, then one run
// compared with another. A log is edited only where a real run cannot differ on its own (the
// tokens a scripted model never reports, a newer writer's event type, other ids and times).
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { diffRuns } from '../../src/machines/runDiff.js';
import { agentConfig, answer, countingTool, runScripted } from '../support/harness.js';

const echo = countingTool('echo').tool;
const upper = countingTool('echo', (input) => ({ echoed: String(input.text ?? '').toUpperCase() })).tool;

async function run(answers: readonly unknown[], tools = [echo], maxIterations = 5): Promise<AgentEvent[]> {
  return (await runScripted({ answers, tools, agent: agentConfig({ maxIterations }) })).events;
}

/** A copy of a log with other ids, times and durations, as a second real run of the same script has. */
function restamped(events: readonly AgentEvent[]): AgentEvent[] {
  return events.map((event, index) => {
    const data = { ...(event.data as unknown as Record<string, unknown>) };
    if (typeof data.durationMs === 'number') data.durationMs = data.durationMs + 1000 + index;
    if (typeof data.startedAt === 'string') data.startedAt = '2030-05-05T05:05:05.000Z';
    return { ...event, id: `other-${index}`, traceId: 'trace-2', time: new Date(Date.parse(event.time) + 99_000).toISOString(), data } as unknown as AgentEvent;
  });
}

describe('diffRuns', () => {
  it('should find no difference between two runs of the same script, whatever their ids, times and durations', async () => {
    const events = await run([answer.tool('echo', { text: 'a' }), answer.final('done')]);
    const diff = diffRuns(events, restamped(events));
    expect(diff.same).toBe(true);
    expect(diff.first).toBeNull();
    expect(diff.iterations.map((it) => [it.iteration, it.a?.decision, it.b?.tool ?? null, it.differences])).toEqual([
      [1, 'tool', 'echo', []],
      [2, 'final', null, []],
    ]);
    // Durations are shown for both runs, never compared.
    expect(diff.iterations[0]?.b?.modelMs).toBeGreaterThan(diff.iterations[0]?.a?.modelMs ?? 0);
  });

  it("should report the first iteration whose tool input differs, with both runs' inputs", async () => {
    const a = await run([answer.tool('echo', { text: 'a' }), answer.tool('echo', { text: 'b' }), answer.final('done')]);
    const b = await run([answer.tool('echo', { text: 'a' }), answer.tool('echo', { text: 'c' }), answer.final('done')]);
    const diff = diffRuns(a, b);
    expect(diff.same).toBe(false);
    expect(diff.first).toEqual({ iteration: 2, field: 'input', a: { text: 'b' }, b: { text: 'c' } });
    expect(diff.iterations.map((it) => it.differences)).toEqual([[], ['input', 'observation'], []]);
  });

  it('should report a final answer where the other run called a tool as a decision that differs', async () => {
    const a = await run([answer.final('at once')]);
    const b = await run([answer.tool('echo', { text: 'x' }), answer.final('at once')]);
    const diff = diffRuns(a, b);
    expect(diff.first).toEqual({ iteration: 1, field: 'decision', a: 'final', b: 'tool' });
    // b's second iteration has nothing to align with in a.
    expect(diff.iterations[1]).toMatchObject({ iteration: 2, a: null, b: { decision: 'final' }, differences: ['decision'] });
    expect(diff.outcome.differences).toEqual([]);
  });

  it("should report a tool's other output as the observation that differs", async () => {
    const script = [answer.tool('echo', { text: 'x' }), answer.final('done')];
    const diff = diffRuns(await run(script, [echo]), await run(script, [upper]));
    expect(diff.first).toEqual({ iteration: 1, field: 'observation', a: { ok: true, output: { echoed: { text: 'x' } } }, b: { ok: true, output: { echoed: 'X' } } });
  });

  it('should report a failed tool call by its error code, not its message', async () => {
    const failing = countingTool('echo', () => {
      throw new Error('out of order');
    }).tool;
    const script = [answer.tool('echo', { text: 'x' }), answer.final('done')];
    const diff = diffRuns(await run(script, [echo]), await run(script, [failing]));
    expect(diff.first).toMatchObject({ iteration: 1, field: 'observation', b: { ok: false, code: 'TOOL_FAILED' } });
  });

  it("should compare the model's tokens when the model reports them", async () => {
    const events = await run([answer.final('done')]);
    const withTokens = (completion: number) =>
      events.map((event) => (event.type === 'model.answered' ? ({ ...event, data: { ...event.data, usage: { promptTokens: 10, completionTokens: completion, totalTokens: 10 + completion } } } as AgentEvent) : event));
    expect(diffRuns(withTokens(5), withTokens(5)).same).toBe(true);
    expect(diffRuns(withTokens(5), withTokens(7)).first).toEqual({ iteration: 1, field: 'tokens', a: { prompt: 10, completion: 5 }, b: { prompt: 10, completion: 7 } });
  });

  it('should not count tokens only one run reported: a scripted model reports none', async () => {
    const events = await run([answer.final('done')]);
    const reported = events.map((event) => (event.type === 'model.answered' ? ({ ...event, data: { ...event.data, usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } } } as AgentEvent) : event));
    const diff = diffRuns(events, reported);
    expect(diff.same).toBe(true);
    // Still shown on each side.
    expect(diff.iterations[0]?.b?.tokens).toEqual({ prompt: 10, completion: 5 });
  });

  it('should report an outcome that differs after the same iterations as a difference at the outcome', async () => {
    const diff = diffRuns(await run([answer.final('yes')]), await run([answer.final('no')]));
    expect(diff.iterations.every((it) => it.differences.length === 0)).toBe(true);
    expect(diff.first).toEqual({ iteration: null, field: 'answer', a: 'yes', b: 'no' });
    expect(diff.outcome.a).toEqual({ status: 'done', reason: 'final_answer', answer: 'yes' });
  });

  it("should compare the outcome's status and reason: an iteration limit against a final answer", async () => {
    const calls = [answer.tool('echo', { text: 'x' }), answer.tool('echo', { text: 'x' })];
    const diff = diffRuns(await run([...calls, answer.final('done')], [echo], 3), await run(calls, [echo], 2));
    expect(diff.first).toEqual({ iteration: 3, field: 'decision', a: 'final', b: null });
    expect(diff.outcome.differences).toEqual(['status', 'reason', 'answer']);
    expect(diff.outcome.b).toMatchObject({ status: 'escalate', reason: 'iteration_limit' });
  });

  it('should leave out event types it does not know, such as a leading marker of a newer writer, and name them', async () => {
    const events = await run([answer.tool('echo', { text: 'a' }), answer.final('done')]);
    const marker = { ...events[0], type: 'run.annotated', seq: 0, data: { note: 'from a newer writer' } } as unknown as AgentEvent;
    const diff = diffRuns([marker, ...events], events);
    expect(diff.same).toBe(true);
    expect(diff.runs.a).toEqual({ traceId: 'trace-1', events: events.length + 1, ignoredEventTypes: ['run.annotated'] });
    expect(diff.runs.b.ignoredEventTypes).toEqual([]);
  });

  it('should compare an unfinished run with a finished one at its outcome', async () => {
    const events = await run([answer.tool('echo', { text: 'a' }), answer.final('done')]);
    const unfinished = events.filter((event) => event.type !== 'run.completed' && event.type !== 'memory.requested' && event.type !== 'memory.saved');
    const diff = diffRuns(events, unfinished);
    expect(diff.outcome.b).toBeNull();
    // Its last answer has no verdict where its log stops.
    expect(diff.first).toEqual({ iteration: 2, field: 'decision', a: 'final', b: 'pending' });
  });
});
