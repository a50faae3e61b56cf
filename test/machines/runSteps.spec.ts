import { describe, expect, it } from 'vitest';
import { fold } from '../../src/events/evolve.js';
import { runSteps, stateAfter } from '../../src/machines/runSteps.js';
import { reactMachine } from '../../src/machines/reactMachine.js';
import { ReactState } from '../../src/machines/reactState.js';
import { agentConfig, answer, runScripted } from '../support/harness.js';

type StateNode = typeof reactMachine.root;
/** The states a run can be in under `node`: the node itself, or its children's (a parent state's leaves). */
const leavesOf = (node: StateNode): StateNode[] => (Object.keys(node.states).length === 0 ? [node] : Object.values(node.states).flatMap(leavesOf));
/** `node` and every state under it, parent states included. */
const nodesOf = (node: StateNode): StateNode[] => [node, ...Object.values(node.states).flatMap(nodesOf)];

/** Every `from → to` the machine's definition allows between its leaf states, a parent's transitions (the root's abort, timeout) from each state in it. */
function machineTransitions(): Set<string> {
  const edges = new Set<string>();
  for (const node of nodesOf(reactMachine.root)) {
    for (const transitions of node.transitions.values()) {
      for (const transition of transitions) {
        for (const target of transition.target ?? []) {
          for (const source of leavesOf(node)) edges.add(`${source.key} → ${target.key}`);
        }
      }
    }
    for (const transition of node.always ?? []) {
      for (const target of transition.target ?? []) edges.add(`${node.key} → ${target.key}`);
    }
  }
  return edges;
}

/**
 * `from → to` pairs the machine can go through in one macrostep: direct transitions, and chains
 * through transient states (only eventless transitions, such as `concluding`), which record no event.
 */
/** Each move from one state to another in `states`, as `from → to` (a step that stays in its state is no move). */
function moves(states: readonly string[]): string[] {
  return states.slice(1).flatMap((to, i) => (states[i] === to ? [] : [`${states[i]} → ${to}`]));
}

function macrostepTransitions(): Set<string> {
  const direct = machineTransitions();
  const transient = new Set(
    leavesOf(reactMachine.root)
      .filter((node) => node.transitions.size === 0 && (node.always?.length ?? 0) > 0 && node.key !== ReactState.Starting)
      .map((node) => node.key),
  );
  const edges = new Set(direct);
  for (let grew = true; grew; ) {
    grew = false;
    for (const first of [...edges]) {
      const [from, via] = first.split(' → ') as [string, string];
      if (!transient.has(via)) continue;
      for (const second of direct) {
        const [start, to] = second.split(' → ') as [string, string];
        const edge = `${from} → ${to}`;
        if (start === via && !edges.has(edge)) {
          edges.add(edge);
          grew = true;
        }
      }
    }
  }
  return edges;
}

describe('runSteps', () => {
  const scripts = {
    'a tool call then a final answer': [answer.tool('echo', { text: 'hi' }), answer.final('done')],
    'an answer that is not JSON': ['not json'],
    'the iteration limit': [answer.tool('echo'), answer.tool('echo'), answer.tool('echo')],
  };

  it('walks only the statechart’s own transitions when the run saves its conversation', async () => {
    const { events } = await runScripted({ answers: [answer.tool('echo', { text: 'hi' }), answer.final('done')], conversationId: 'c-1' });
    expect(events.map((event) => event.type)).toContain('memory.saved');
    const allowed = macrostepTransitions();
    const made = moves(runSteps(events).map((step) => step.state));
    expect(made).not.toEqual([]);
    for (const move of made) expect(allowed, move).toContain(move);
  });

  it.each(Object.entries(scripts))('walks only the statechart’s own transitions for %s', async (_name, answers) => {
    const { events } = await runScripted({ answers, agent: agentConfig({ maxIterations: 2 }) });
    const allowed = macrostepTransitions();
    // Two facts recorded by one transition (run.started with model.requested) share its target: no move between them.
    const made = moves(runSteps(events).map((step) => step.state));
    expect(made).not.toEqual([]);
    for (const move of made) expect(allowed, move).toContain(move);
  });

  it('ends in done for a final answer and in error for an invalid one, with the fold of the log as the last envelope', async () => {
    const good = await runScripted({ answers: [answer.final('ok')] });
    const goodSteps = runSteps(good.events);
    expect(goodSteps.at(-1)?.state).toBe(ReactState.Done);
    expect(goodSteps.at(-1)?.envelope).toEqual(fold(good.events));

    const bad = await runScripted({ answers: ['{"action": "final",'] });
    expect(runSteps(bad.events).at(-1)?.state).toBe(ReactState.Error);
  });

  it('gives each step the envelope folded up to its own event', async () => {
    const { events } = await runScripted({ answers: [answer.tool('echo'), answer.final('done')] });
    runSteps(events).forEach((step, i) => {
      expect(step.event).toBe(events[i]);
      expect(step.envelope).toEqual(fold(events.slice(0, i + 1)));
    });
  });

  it('shows the first events as leaving the starting state', () => {
    expect(stateAfter({ type: 'run.started' })).toBe(ReactState.Starting);
    expect(stateAfter({ type: 'model.requested' })).toBe(ReactState.AwaitingModel);
  });
});
