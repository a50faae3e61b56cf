import { describe, expect, it } from 'vitest';
import { ANY_STATE, statechartFromMachine, transitionTaken } from '../../src/editor/statechart/statechartGraph.js';
import { reactMachine } from '../../src/machines/reactMachine.js';
import { ReactState } from '../../src/machines/reactState.js';

describe('the statechart diagram', () => {
  const graph = statechartFromMachine(reactMachine);
  const arrow = (source: string, target: string) => graph.transitions.find((t) => t.source === source && t.target === target && !t.resume);

  it('should draw every state of reactMachine, the initial and final ones marked', () => {
    expect(graph.machineId).toBe('react');
    expect(graph.states.map((s) => s.id).sort()).toEqual(Object.values(ReactState).sort());
    expect(graph.states.find((s) => s.initial)?.id).toBe(ReactState.Starting);
    expect(graph.states.filter((s) => s.final).map((s) => s.id).sort()).toEqual([ReactState.Done, ReactState.Error]);
  });

  it('should draw the transitions of the definition, labelled by event or guard', () => {
    expect(arrow(ReactState.AwaitingModel, ReactState.Validating)).toMatchObject({ trigger: 'event', labels: ['model.answer'] });
    expect(arrow(ReactState.AwaitingModel, ReactState.Error)?.labels).toEqual(['model.failure']);
    expect(arrow(ReactState.Validating, ReactState.Done)).toMatchObject({ trigger: 'always', labels: ['answerIsFinal'] });
    expect(arrow(ReactState.Validating, ReactState.Error)?.labels).toEqual(['answerIsInvalid']);
    expect(arrow(ReactState.AwaitingTool, ReactState.CheckingStop)?.labels).toEqual(['tool.result']);
    expect(arrow(ReactState.CheckingStop, ReactState.Done)?.labels).toEqual(['confidenceThresholdReached', 'iterationLimitReached']);
    expect(arrow(ReactState.CheckingStop, ReactState.AwaitingModel)).toBeDefined();
    expect(arrow(ANY_STATE, ReactState.Error)).toMatchObject({ trigger: 'any', labels: ['abort', 'timeout'] });
    expect(graph.transitions.filter((t) => t.resume).map((t) => t.target).sort()).toEqual(
      [ReactState.AwaitingModel, ReactState.AwaitingTool, ReactState.CheckingStop, ReactState.Validating].sort(),
    );
    // Nothing drawn that the machine does not have.
    expect(arrow(ReactState.Done, ReactState.AwaitingModel)).toBeUndefined();
  });

  it('should lay the loop out in the order a run goes, with the final states beside it', () => {
    const column0 = graph.states.filter((s) => s.column === 0).sort((a, b) => a.row - b.row).map((s) => s.id);
    expect(column0).toEqual([ReactState.Starting, ReactState.AwaitingModel, ReactState.Validating, ReactState.AwaitingTool, ReactState.CheckingStop]);
    const rows = graph.states.filter((s) => s.column === 1).map((s) => s.row);
    expect(new Set(rows).size).toBe(rows.length);
  });

  it('should find the transition taken between two states', () => {
    expect(transitionTaken(graph, ReactState.Validating, ReactState.AwaitingTool)?.id).toBe('validating->awaitingTool');
    expect(transitionTaken(graph, ReactState.AwaitingTool, ReactState.Error)?.source).toBe(ANY_STATE);
    expect(transitionTaken(graph, undefined, ReactState.Starting)).toBeUndefined();
  });
});
