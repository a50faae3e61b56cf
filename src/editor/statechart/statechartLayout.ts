/**
 * Where the statechart's states, parent boxes, arrows and arrow labels go, laid out for reading by
 * the editor's layout library (`@dagrejs/dagre`, as the flow's auto layout, flow/autoLayout.ts):
 * each label is placed by dagre as a box of its own in the middle of its arrow, so no label sits
 * on a state or on another label, and the parent states (`waiting`, `ending`) are dagre clusters
 * around their states. Sizes are for 12 px monospace text, so the layout holds at zoom 1.
 */
import { Graph, layout } from '@dagrejs/dagre';
import { ANY_STATE, type StatechartGraph, type StatechartTransition } from './statechartGraph.js';

/** The width of one character of the 12 px monospace type states and labels are drawn in. */
const CHAR_WIDTH = 7.3;
export const STATE_HEIGHT = 30;
export const LABEL_HEIGHT = 18;
const STATE_PADDING = 28;
const LABEL_PADDING = 10;

/** A box by its top-left corner. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** A laid out arrow: the points it goes through, and its label's box (if it has one). */
export interface RoutedTransition {
  readonly transition: StatechartTransition;
  readonly label: string | undefined;
  readonly points: readonly { readonly x: number; readonly y: number }[];
  readonly labelBox: Box | undefined;
}

/** The whole layout: states (with `ANY_STATE` when a transition comes from any state), parents, arrows. */
export interface StatechartLayout {
  readonly states: ReadonlyMap<string, Box>;
  readonly parents: ReadonlyMap<string, Box>;
  readonly transitions: readonly RoutedTransition[];
}

/** An arrow's label: its first event or guard, and how many more it stands for. Resume arrows have none, so the run's own loop reads first. */
export function transitionLabel(transition: StatechartTransition): string | undefined {
  if (transition.resume) return undefined;
  const [first] = transition.labels;
  return transition.labels.length > 1 ? `${first} +${transition.labels.length - 1}` : first;
}

const textWidth = (text: string, padding: number) => Math.ceil(text.length * CHAR_WIDTH + padding);

/**
 * Lays `graph` out top to bottom.
 *
 * @example
 * ```ts
 * const { states } = layoutStatechart(statechartFromMachine(reactMachine));
 * states.get('awaitingModel'); // { x, y, width, height }
 * ```
 */
export function layoutStatechart(graph: StatechartGraph): StatechartLayout {
  const g = new Graph({ multigraph: true, compound: true });
  g.setGraph({ rankdir: 'TB', nodesep: 36, ranksep: 44, edgesep: 16, marginx: 8, marginy: 8 });
  const anyState = graph.transitions.some((transition) => transition.source === ANY_STATE);
  const stateIds = [...graph.states.map((state) => state.id), ...(anyState ? [ANY_STATE] : [])];
  for (const id of stateIds) g.setNode(id, { width: textWidth(id === ANY_STATE ? 'any state' : id, STATE_PADDING), height: STATE_HEIGHT });
  for (const state of graph.states) {
    if (state.parent === undefined) continue;
    if (!g.hasNode(state.parent)) g.setNode(state.parent, { paddingTop: LABEL_HEIGHT });
    g.setParent(state.id, state.parent);
  }
  for (const transition of graph.transitions) {
    const label = transitionLabel(transition);
    g.setEdge(transition.source, transition.target, label === undefined ? { width: 0, height: 0 } : { width: textWidth(label, LABEL_PADDING), height: LABEL_HEIGHT, labelpos: 'c' }, transition.id);
  }
  layout(g);

  const boxOf = (id: string): Box => {
    const node = g.node(id) as { x: number; y: number; width: number; height: number };
    return { x: node.x - node.width / 2, y: node.y - node.height / 2, width: node.width, height: node.height };
  };
  const parentIds = [...new Set(graph.states.flatMap((state) => (state.parent === undefined ? [] : [state.parent])))];
  const transitions = graph.transitions.map((transition): RoutedTransition => {
    const edge = g.edge({ v: transition.source, w: transition.target, name: transition.id }) as { points: { x: number; y: number }[]; x?: number; y?: number; width: number; height: number };
    const label = transitionLabel(transition);
    const labelBox = label === undefined || edge.x === undefined || edge.y === undefined ? undefined : { x: edge.x - edge.width / 2, y: edge.y - edge.height / 2, width: edge.width, height: edge.height };
    return { transition, label, points: edge.points, labelBox };
  });
  return { states: new Map(stateIds.map((id) => [id, boxOf(id)])), parents: new Map(parentIds.map((id) => [id, boxOf(id)])), transitions };
}
