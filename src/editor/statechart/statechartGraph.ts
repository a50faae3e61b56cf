/**
 * The REACT statechart as a graph to draw, read from the machine's own definition (its state
 * nodes and their transitions), so the drawing cannot drift from `reactMachine`.
 */
import type { AnyStateMachine } from 'xstate';

/** One state of the diagram. */
export interface StatechartState {
  readonly id: string;
  readonly initial: boolean;
  readonly final: boolean;
  /** Column 0 holds the loop a run goes round, column 1 the states that end a run, column 2 the final states. */
  readonly column: number;
  /** Row in the column (fractional in columns 1 and 2, placed beside their sources). */
  readonly row: number;
  /** The parent state it is in (`waiting`, `ending`), if any: the diagram draws a box around each parent's states. */
  readonly parent?: string;
}

/** How a transition is taken. */
export type TransitionTrigger = 'event' | 'always' | 'any';

/** One arrow of the diagram: every transition from `source` to `target`, merged. */
export interface StatechartTransition {
  readonly id: string;
  /** A state id, or {@link ANY_STATE} for the machine's root transitions (taken from any state). */
  readonly source: string;
  readonly target: string;
  /** The events (or guards of eventless transitions) that take it. */
  readonly labels: readonly string[];
  readonly trigger: TransitionTrigger;
  /** True for a transition that only a resumed run takes (guard `resumesAt`). */
  readonly resume: boolean;
}

/** The diagram. */
export interface StatechartGraph {
  readonly machineId: string;
  readonly states: readonly StatechartState[];
  readonly transitions: readonly StatechartTransition[];
}

/** The source of root-level transitions, which leave from any state. */
export const ANY_STATE = '*';

interface TransitionLike {
  readonly target?: readonly { readonly key: string }[] | undefined;
  readonly guard?: unknown;
  readonly eventType: string;
}

interface StateNodeLike {
  readonly key: string;
  readonly type: string;
  readonly states: Readonly<Record<string, StateNodeLike>>;
  readonly transitions: ReadonlyMap<string, readonly TransitionLike[]>;
  readonly always?: readonly TransitionLike[] | undefined;
  readonly initial?: { readonly target: readonly { readonly key: string }[] } | undefined;
}

function guardName(guard: unknown): string | undefined {
  if (typeof guard === 'string') return guard;
  // xstate's and() / or() / not(): a function named for the operator, holding its guards.
  if (typeof guard === 'function' && 'guards' in guard && Array.isArray(guard.guards)) {
    const parts = guard.guards.map((part: unknown) => guardName(part) ?? 'guard');
    return guard.name === 'not' ? `!${parts.join('')}` : parts.join(guard.name === 'or' ? ' | ' : ' & ');
  }
  if (typeof guard === 'object' && guard !== null && 'type' in guard && typeof guard.type === 'string') return guard.type;
  if (typeof guard === 'function') return guard.name || 'guard';
  return undefined;
}

/** The states a run can be in under `node`: the node itself, or its children's (a parent state's leaves). */
function leavesOf(node: StateNodeLike): StateNodeLike[] {
  const children = Object.values(node.states);
  return children.length === 0 ? [node] : children.flatMap(leavesOf);
}

/**
 * The states and transitions of a machine (like `reactMachine`), merged by source and target,
 * and laid out: the loop a run goes round in one column in the order the machine first reaches
 * it, the states that end a run in a second column and the final states in a third, each beside
 * the states that lead to it. The states drawn are those a run can be in; a parent state is the
 * `parent` of each state in it, and its transitions are drawn from each of them.
 *
 * @example
 * ```ts
 * const graph = statechartFromMachine(reactMachine);
 * graph.states.map((s) => s.id) // ['starting', 'awaitingModel', …, 'done', 'error']
 * ```
 */
export function statechartFromMachine(machine: AnyStateMachine): StatechartGraph {
  const root = machine.root as unknown as StateNodeLike;
  const merged = new Map<string, { source: string; target: string; labels: string[]; trigger: TransitionTrigger; resume: boolean }>();
  const add = (source: string, transition: TransitionLike, trigger: TransitionTrigger): void => {
    const guard = guardName(transition.guard);
    const label = trigger === 'always' ? (guard ?? 'always') : transition.eventType;
    const resume = guard === 'resumesAt';
    for (const target of transition.target ?? []) {
      const key = `${source}->${target.key}${resume ? ':resume' : ''}`;
      const entry = merged.get(key) ?? { source, target: target.key, labels: [], trigger, resume };
      if (!entry.labels.includes(label)) entry.labels.push(label);
      merged.set(key, entry);
    }
  };

  for (const [, list] of root.transitions) for (const t of list) add(ANY_STATE, t, 'any');
  const stateNodes = leavesOf(root);
  const parentOf = new Map<string, string>();
  for (const parent of Object.values(root.states)) {
    const leaves = leavesOf(parent);
    for (const leaf of leaves) if (leaf !== parent) parentOf.set(leaf.key, parent.key);
    for (const [, list] of parent.transitions) for (const t of list) for (const leaf of leaves) if (leaf !== parent) add(leaf.key, t, 'event');
  }
  for (const node of stateNodes) {
    for (const [, list] of node.transitions) for (const t of list) add(node.key, t, 'event');
    for (const t of node.always ?? []) add(node.key, t, 'always');
  }

  const initial = root.initial?.target[0]?.key;
  const transitions = [...merged.values()].map((t): StatechartTransition => ({
    id: `${t.source}->${t.target}${t.resume ? ':resume' : ''}`,
    ...t,
  }));

  // Column 0: the loop, in the order a run first reaches it (breadth first from the initial
  // state); column 1: the states that end a run (they cannot lead back into the loop, such as
  // concluding); column 2: the final states. Columns 1 and 2 sit beside the states leading to them.
  const isFinal = new Map(stateNodes.map((node) => [node.key, node.type === 'final']));
  const forward = transitions.filter((t) => !t.resume && t.source !== ANY_STATE);
  // The loop's head: the first state the initial one leads to that does not itself end the run
  // (has no arrow into a final state), so a way out taken before the loop (a budget spent before
  // the first call goes straight to concluding) does not become the loop.
  const endsRun = (id: string) => forward.some((t) => t.source === id && isFinal.get(t.target) === true);
  const fromInitial = forward.filter((t) => t.source === initial);
  const head = (fromInitial.find((t) => !endsRun(t.target)) ?? fromInitial[0])?.target;
  const reachesLoop = (from: string): boolean => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length > 0) {
      const id = stack.pop() as string;
      if (id === head) return true;
      if (seen.has(id)) continue;
      seen.add(id);
      for (const t of forward) if (t.source === id) stack.push(t.target);
    }
    return false;
  };
  const columnOf = new Map(
    stateNodes.map((node) => [node.key, isFinal.get(node.key) ? 2 : node.key === initial || reachesLoop(node.key) ? 0 : 1]),
  );
  const order: string[] = [];
  const queue = initial !== undefined ? [initial] : [];
  while (queue.length > 0) {
    const id = queue.shift() as string;
    if (order.includes(id) || columnOf.get(id) !== 0) continue;
    order.push(id);
    for (const t of forward) if (t.source === id) queue.push(t.target);
  }
  for (const node of stateNodes) if (columnOf.get(node.key) === 0 && !order.includes(node.key)) order.push(node.key);
  const rowOf = new Map(order.map((id, index) => [id, index]));

  const placed: StatechartState[] = order.map((id) => ({ id, initial: id === initial, final: false, column: 0, row: rowOf.get(id) as number }));
  for (const column of [1, 2]) {
    const beside = stateNodes
      .filter((node) => columnOf.get(node.key) === column)
      .map((node) => {
        const rows = transitions.filter((t) => t.target === node.key && rowOf.has(t.source)).map((t) => rowOf.get(t.source) as number);
        return { id: node.key, mean: rows.length === 0 ? order.length : rows.reduce((a, b) => a + b, 0) / rows.length };
      })
      .sort((a, b) => a.mean - b.mean);
    let lastRow = -1;
    for (const { id, mean } of beside) {
      const row = Math.max(mean, lastRow + 1);
      rowOf.set(id, row);
      lastRow = row;
      placed.push({ id, initial: false, final: column === 2, column, row });
    }
  }
  const states = placed.map((state) => (parentOf.has(state.id) ? { ...state, parent: parentOf.get(state.id) } : state));
  return { machineId: machine.id, states, transitions };
}

/**
 * The transition just taken when the machine went from `previous` to `current` (the arrow the
 * diagram highlights), or `undefined`.
 */
export function transitionTaken(graph: StatechartGraph, previous: string | undefined, current: string | undefined): StatechartTransition | undefined {
  if (previous === undefined || current === undefined) return undefined;
  const direct = (from: string, to: string) =>
    graph.transitions.find((t) => t.source === from && t.target === to && !t.resume) ??
    graph.transitions.find((t) => t.source === from && t.target === to) ??
    graph.transitions.find((t) => t.source === ANY_STATE && t.target === to);
  // Through a state that records no event of its own (concluding): the arrow into `current`.
  return (
    direct(previous, current) ??
    graph.transitions.find((t) => t.target === current && t.source !== ANY_STATE && direct(previous, t.source) !== undefined)
  );
}
