import { describe, expect, it } from 'vitest';
import { ANY_STATE, statechartFromMachine, transitionTaken } from '../../src/editor/statechart/statechartGraph.js';
import { reactMachine } from '../../src/machines/reactMachine.js';
import { GROUP_OF, ReactState } from '../../src/machines/reactState.js';

describe('the statechart diagram', () => {
  const graph = statechartFromMachine(reactMachine);
  const arrow = (source: string, target: string) => graph.transitions.find((t) => t.source === source && t.target === target && !t.resume);

  it('should draw every state of reactMachine, the initial and final ones marked', () => {
    expect(graph.machineId).toBe('react');
    expect(graph.states.map((s) => s.id).sort()).toEqual(Object.values(ReactState).sort());
    expect(graph.states.find((s) => s.initial)?.id).toBe(ReactState.Starting);
    expect(graph.states.filter((s) => s.final).map((s) => s.id).sort()).toEqual([ReactState.Done, ReactState.Error]);
  });

  it('should put each state in the parent state the machine puts it in', () => {
    expect(Object.fromEntries(graph.states.flatMap((s) => (s.parent ? [[s.id, s.parent]] : [])))).toEqual(GROUP_OF);
    expect(graph.states.find((s) => s.id === ReactState.AwaitingHuman)?.parent).toBe('waiting');
    expect(graph.states.find((s) => s.id === ReactState.SavingMemory)?.parent).toBe('ending');
  });

  it('should draw the transitions of the definition, labelled by event or guard', () => {
    expect(arrow(ReactState.AwaitingModel, ReactState.Validating)).toMatchObject({ trigger: 'event', labels: ['model.answer'] });
    expect(arrow(ReactState.AwaitingModel, ReactState.Concluding)?.labels).toEqual(['model.failure']);
    expect(arrow(ReactState.Validating, ReactState.Concluding)).toMatchObject({ trigger: 'always', labels: ['answerOverBudget', 'answerNeedsRepair & repairOverBudget', 'answerIsInvalid', 'outputNeedsRepair & repairOverBudget', 'answerGoesToVerification & verificationOverBudget', 'answerIsFinal', 'answerDelegates'] });
    // A budget spent before the first call, or (a run resumed before its next call was recorded) before that one.
    expect(arrow(ReactState.Starting, ReactState.Concluding)?.labels).toEqual(['firstCallOverBudget', 'resumesAt & nextCallOverBudget', 'resumesAt & verificationOverBudget']);
    // An invalid answer or a final output sent back for repair, and a question to a person with its answer.
    expect(arrow(ReactState.Validating, ReactState.AwaitingModel)).toMatchObject({ trigger: 'always', labels: ['answerNeedsRepair', 'outputNeedsRepair'] });
    expect(arrow(ReactState.Validating, ReactState.AwaitingHuman)).toMatchObject({ trigger: 'always', labels: ['answerAsksPerson'] });
    expect(arrow(ReactState.AwaitingHuman, ReactState.CheckingStop)?.labels).toEqual(['human.answer']);
    expect(arrow(ReactState.AwaitingHuman, ReactState.Concluding)?.labels).toEqual(['wait.expire']);
    expect(arrow(ReactState.AwaitingTool, ReactState.CheckingStop)?.labels).toEqual(['tool.result']);
    // The waits for an answer from outside, and their answers.
    expect(arrow(ReactState.Validating, ReactState.AwaitingApproval)).toMatchObject({ trigger: 'always', labels: ['toolNeedsApproval'] });
    expect(arrow(ReactState.Validating, ReactState.AwaitingClient)).toMatchObject({ trigger: 'always', labels: ['toolRunsOnClient'] });
    expect(arrow(ReactState.AwaitingApproval, ReactState.AwaitingTool)?.labels).toEqual(['tool.approve']);
    expect(arrow(ReactState.AwaitingApproval, ReactState.AwaitingClient)?.labels).toEqual(['tool.approve']);
    expect(arrow(ReactState.AwaitingApproval, ReactState.CheckingStop)?.labels).toEqual(['tool.deny']);
    expect(arrow(ReactState.AwaitingClient, ReactState.CheckingStop)?.labels).toEqual(['tool.result']);
    expect(arrow(ReactState.AwaitingClient, ReactState.Concluding)?.labels).toEqual(['wait.expire']);
    expect(arrow(ReactState.CheckingStop, ReactState.Concluding)?.labels).toEqual(['confidenceThresholdReached', 'iterationLimitReached', 'nextCallOverBudget']);
    expect(arrow(ReactState.CheckingStop, ReactState.AwaitingModel)).toBeDefined();
    expect(arrow(ReactState.Concluding, ReactState.SavingMemory)?.labels).toEqual(['savesMemory']);
    expect(arrow(ReactState.SavingMemory, ReactState.Concluding)?.labels).toEqual(['memory.saved', 'memory.failure']);
    expect(arrow(ReactState.Concluding, ReactState.Error)?.labels).toEqual(['endsInFailure']);
    expect(arrow(ReactState.Concluding, ReactState.Done)?.labels).toEqual(['always']);
    expect(arrow(ANY_STATE, ReactState.Concluding)).toMatchObject({ trigger: 'any', labels: ['abort', 'timeout'] });
    expect(graph.transitions.filter((t) => t.resume).map((t) => t.target).sort()).toEqual(
      [
        ReactState.AwaitingModel,
        ReactState.AwaitingTool,
        ReactState.AwaitingApproval,
        ReactState.AwaitingClient,
        ReactState.AwaitingHuman,
        ReactState.CheckingStop,
        ReactState.Validating,
        ReactState.SavingMemory,
        ReactState.Concluding,
        ReactState.Verifying,
        ReactState.CheckingVerification,
      ].sort(),
    );
    expect(arrow(ReactState.Validating, ReactState.Verifying)?.labels).toEqual(['answerGoesToVerification']);
    expect(arrow(ReactState.CheckingVerification, ReactState.Concluding)?.labels).toEqual(['verificationPassed', 'verificationsExhausted', 'nextCallOverBudget']);
    // Nothing drawn that the machine does not have.
    expect(arrow(ReactState.Done, ReactState.AwaitingModel)).toBeUndefined();
    expect(arrow(ReactState.Validating, ReactState.Done)).toBeUndefined();
  });

  it('should lay the loop out in the order a run goes, the states that end a run beside it, and the final states last', () => {
    const column = (n: number) => graph.states.filter((s) => s.column === n).sort((a, b) => a.row - b.row).map((s) => s.id);
    expect(column(0)).toEqual([
      ReactState.Starting,
      ReactState.AwaitingModel,
      ReactState.Validating,
      ReactState.Verifying,
      ReactState.AwaitingHuman,
      ReactState.AwaitingApproval,
      ReactState.AwaitingClient,
      ReactState.AwaitingTool,
      ReactState.CheckingVerification,
      ReactState.CheckingStop,
    ]);
    expect(column(1).sort()).toEqual([ReactState.Concluding, ReactState.SavingMemory].sort());
    expect(column(2).sort()).toEqual([ReactState.Done, ReactState.Error].sort());
    for (const n of [1, 2]) {
      const rows = graph.states.filter((s) => s.column === n).map((s) => s.row);
      expect(new Set(rows).size).toBe(rows.length);
    }
  });

  it('should find the transition taken between two states, through concluding when it records nothing', () => {
    expect(transitionTaken(graph, ReactState.Validating, ReactState.AwaitingTool)?.id).toBe('validating->awaitingTool');
    expect(transitionTaken(graph, ReactState.Validating, ReactState.Done)?.id).toBe('concluding->done');
    expect(transitionTaken(graph, ReactState.AwaitingTool, ReactState.Error)?.id).toBe('concluding->error');
    expect(transitionTaken(graph, ReactState.AwaitingTool, ReactState.SavingMemory)?.id).toBe('concluding->savingMemory');
    expect(transitionTaken(graph, undefined, ReactState.Starting)).toBeUndefined();
  });
});
