import { describe, expect, it } from 'vitest';
import { activeNodesAfter, runErrors, runViewAt } from '../../src/editor/run/runView.js';
import { parseRunInput } from '../../src/flows/runInput.js';
import { runSteps } from '../../src/machines/runSteps.js';
import { ReactState } from '../../src/machines/reactState.js';
import { countingTool, runScripted } from '../support/harness.js';

const nodes = [
  { id: 'core', type: 'agent.core', toolName: undefined },
  { id: 'llm', type: 'model.llm', toolName: undefined },
  { id: 'echo', type: 'tool.module', toolName: undefined },
  { id: 'other', type: 'tool.http', toolName: 'other_tool' },
  { id: 'reply', type: 'response.chat', toolName: undefined },
];

describe('the run view', () => {
  it('should follow a run step by step: state, timeline, highlighted nodes', async () => {
    const { events } = await runScripted({
      answers: [
        { action: 'tool', tool: 'echo', input: { text: 'a' }, confidence: 0.4 },
        { action: 'final', message: 'done', confidence: 0.9 },
      ],
    });
    const steps = runSteps(events);
    const last = runViewAt(steps);
    expect(last.index).toBe(steps.length - 1);
    expect(last.state).toBe(ReactState.Done);
    expect(last.timeline.map((s) => [s.iteration, s.action, s.tool, s.confidence])).toEqual([
      [1, 'tool', 'echo', 0.4],
      [2, 'final', undefined, 0.9],
    ]);
    expect(last.errors).toEqual([]);
    expect(activeNodesAfter(last.step?.event, nodes)).toEqual({ core: 'done', reply: 'done' });

    const toolStep = steps.findIndex((s) => s.event.type === 'tool.requested');
    const atTool = runViewAt(steps, toolStep);
    expect(atTool.state).toBe(ReactState.AwaitingTool);
    expect(atTool.previous?.state).toBe(ReactState.Validating);
    expect(atTool.timeline).toHaveLength(1);
    expect(activeNodesAfter(atTool.step?.event, nodes)).toEqual({ echo: 'active' });
    expect(activeNodesAfter(steps[1]?.event, nodes)).toEqual({ llm: 'active' });
    // The step details follow the scrubber: at the tool's request, its result is not known yet.
    expect(last.details.iterations.map((it) => it.model?.verdict.kind)).toEqual(['tool', 'final']);
    expect(last.details.iterations[0]?.tool?.result).toMatchObject({ ok: true });
    expect(atTool.details.iterations).toHaveLength(1);
    expect(atTool.details.iterations[0]?.tool).toMatchObject({ tool: 'echo', input: { text: 'a' }, result: null });
    expect(runViewAt(steps, -5).index).toBe(0);
    expect(runViewAt([], 3)).toMatchObject({ index: -1, state: undefined, timeline: [] });
  });

  it('should list an invalid answer and a failed tool call as errors, with code, message and hint', async () => {
    const failing = countingTool('echo', () => {
      throw new Error('boom');
    });
    const { events } = await runScripted({
      answers: [{ action: 'tool', tool: 'echo', input: { text: 'a' }, confidence: 0.5 }, 'not json'],
      tools: [failing.tool],
    });
    const errors = runErrors(events);
    expect(errors.map((e) => [e.code, e.source, e.iteration])).toEqual([
      ['TOOL_FAILED', 'tool', 1],
      ['INVALID_JSON', 'outcome', 2],
    ]);
    expect(errors[1]?.message).toBeTruthy();
    const steps = runSteps(events);
    expect(activeNodesAfter(steps.at(-1)?.event, nodes)).toEqual({ core: 'failed' });
  });

  it('should show an iteration overflow as ITERATION_OVERFLOW', async () => {
    const { events } = await runScripted({
      answers: [{ action: 'tool', tool: 'echo', input: {}, confidence: 0.5 }],
      agent: { strategy: 'react', maxIterations: 1, allowedTools: ['echo'] },
    });
    expect(runErrors(events).map((e) => e.code)).toEqual(['ITERATION_OVERFLOW']);
  });

  it('should read the run input as the CLI does', () => {
    expect(parseRunInput('hello')).toBe('hello');
    expect(parseRunInput('{"a":1}')).toEqual({ a: 1 });
    expect(parseRunInput('[1, 2]')).toEqual([1, 2]);
    expect(parseRunInput('{not json')).toBe('{not json');
  });
});
