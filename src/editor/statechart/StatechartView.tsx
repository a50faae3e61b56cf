/**
 * The REACT statechart beside the flow: a small read-only React Flow whose states and transitions
 * come from `reactMachine`'s definition, with the run's current state (from the log, `stateAfter`)
 * and the transition just taken highlighted.
 */
import { Handle, Position, ReactFlow, ReactFlowProvider, type Edge, type Node, type NodeProps } from '@xyflow/react';
import { memo, useMemo } from 'react';
import { reactMachine } from '../../machines/reactMachine.js';
import { ANY_STATE, statechartFromMachine, transitionTaken, type StatechartTransition } from './statechartGraph.js';

type StateNodeData = { label: string; final: boolean; initial: boolean; current: boolean; any: boolean };
type StateNode = Node<StateNodeData, 'state'>;
type ParentNode = Node<{ label: string }, 'parent'>;

const graph = statechartFromMachine(reactMachine);

const COLUMN_X = [0, 215, 430];
const ROW_Y = 54;
/** Wide enough for the longest state name and a margin either side. */
const PARENT_WIDTH = 150;

function StateNodeView({ id, data }: NodeProps<StateNode>) {
  const classes = ['sc-state'];
  if (data.final) classes.push('sc-state--final');
  if (data.initial) classes.push('sc-state--initial');
  if (data.any) classes.push('sc-state--any');
  if (data.current) classes.push('is-current');
  return (
    <div className={classes.join(' ')} data-testid={`statechart-state-${data.any ? 'any' : id}`} data-current={data.current ? 'true' : 'false'}>
      <Handle type="target" position={Position.Top} id="top" isConnectable={false} />
      <Handle type="source" position={Position.Bottom} id="bottom" isConnectable={false} />
      <Handle type="source" position={Position.Right} id="right" isConnectable={false} />
      <Handle type="target" position={Position.Left} id="left" isConnectable={false} />
      <Handle type="source" position={Position.Left} id="left-out" isConnectable={false} />
      <Handle type="target" position={Position.Left} id="left-in" isConnectable={false} />
      {data.label}
    </div>
  );
}

/** A parent state (`waiting`, `ending`): a labelled box behind the states in it. */
function ParentNodeView({ id, data }: NodeProps<ParentNode>) {
  return (
    <div className="sc-parent" data-testid={`statechart-parent-${id}`}>
      {data.label}
    </div>
  );
}

const stateNodeTypes = { state: memo(StateNodeView), parent: memo(ParentNodeView) };

/** The boxes of the parent states, around the rows and columns of the states in each. */
const parentNodes: ParentNode[] = [...new Set(graph.states.flatMap((state) => (state.parent ? [state.parent] : [])))].map((parent) => {
  const members = graph.states.filter((state) => state.parent === parent);
  const x = (state: { column: number }) => COLUMN_X[state.column] ?? 0;
  const left = Math.min(...members.map(x));
  const top = Math.min(...members.map((state) => state.row)) * ROW_Y;
  const bottom = Math.max(...members.map((state) => state.row)) * ROW_Y;
  return {
    id: parent,
    type: 'parent',
    position: { x: left - 10, y: top - 18 },
    style: { width: Math.max(...members.map(x)) - left + PARENT_WIDTH, height: bottom - top + 50 },
    data: { label: parent },
    zIndex: -1,
    draggable: false,
    selectable: false,
  };
});

const rowOf = new Map(graph.states.map((state) => [state.id, state]));

function edgeOf(transition: StatechartTransition, active: boolean): Edge {
  const source = transition.source === ANY_STATE ? undefined : rowOf.get(transition.source);
  const target = rowOf.get(transition.target);
  const base = {
    id: transition.id,
    source: transition.source,
    target: transition.target,
    // Resume transitions (a resumed run) are drawn thin and unlabelled, so the run's own loop reads first.
    label: transition.resume ? undefined : transition.labels.length > 1 ? `${transition.labels[0]} +${transition.labels.length - 1}` : transition.labels[0],
    className: ['sc-edge', transition.resume ? 'sc-edge--resume' : '', transition.trigger === 'any' ? 'sc-edge--any' : '', active ? 'is-taken' : '']
      .filter(Boolean)
      .join(' '),
    animated: active,
    labelStyle: { fontSize: 9 },
    labelBgPadding: [3, 1] as [number, number],
  };
  if (!source || !target) return { ...base, sourceHandle: 'bottom', targetHandle: 'top' };
  if (source.column !== target.column) return { ...base, sourceHandle: 'right', targetHandle: 'left' };
  if (target.row === source.row + 1 && !transition.resume) return { ...base, sourceHandle: 'bottom', targetHandle: 'top' };
  // A loop back, or a resume jump: around the left; the loop outermost, the jumps nested by length.
  const span = Math.abs(target.row - source.row);
  const offset = transition.resume ? 8 + span * 5 : 44;
  return { ...base, sourceHandle: 'left-out', targetHandle: 'left-in', type: 'smoothstep', pathOptions: { offset, borderRadius: 6 } } as Edge;
}

/** The statechart view's props: the states to highlight, from the run's log. */
export interface StatechartViewProps {
  /** The state the run is in at the viewed position, if a run is shown. */
  readonly current: string | undefined;
  /** The state before it, to highlight the transition taken. */
  readonly previous: string | undefined;
}

function StatechartDiagram({ current, previous }: StatechartViewProps) {
  const nodes = useMemo((): (StateNode | ParentNode)[] => {
    const states: (StateNode | ParentNode)[] = graph.states.map((state) => ({
      id: state.id,
      type: 'state' as const,
      position: { x: COLUMN_X[state.column] ?? 0, y: state.row * ROW_Y },
      data: { label: state.id, final: state.final, initial: state.initial, current: state.id === current, any: false },
      draggable: false,
      selectable: false,
    }));
    const anyTarget = graph.transitions.find((t) => t.source === ANY_STATE);
    const anchor = anyTarget ? graph.states.find((s) => s.id === anyTarget.target) : undefined;
    if (anchor) {
      // Above its target, or above the box of the parent state the target is in.
      const top = Math.min(...graph.states.filter((s) => s.id === anchor.id || (anchor.parent !== undefined && s.parent === anchor.parent)).map((s) => s.row));
      states.push({
        id: ANY_STATE,
        type: 'state',
        position: { x: COLUMN_X[anchor.column] ?? 0, y: (top - 1.1) * ROW_Y - (anchor.parent === undefined ? 0 : 18) },
        data: { label: 'any state', final: false, initial: false, current: false, any: true },
        draggable: false,
        selectable: false,
      });
    }
    return [...parentNodes, ...states];
  }, [current]);
  const edges = useMemo(() => {
    const taken = transitionTaken(graph, previous, current);
    return graph.transitions.map((transition) => edgeOf(transition, transition.id === taken?.id));
  }, [current, previous]);

  return (
    <ReactFlow
      nodes={nodes}
      edges={edges}
      nodeTypes={stateNodeTypes}
      fitView
      fitViewOptions={{ padding: { top: '14px', bottom: '10px', left: '70px', right: '12px' } }}
      nodesDraggable={false}
      nodesConnectable={false}
      elementsSelectable={false}
      panOnDrag={false}
      zoomOnScroll={false}
      zoomOnPinch={false}
      zoomOnDoubleClick={false}
      preventScrolling={false}
      proOptions={{ hideAttribution: true }}
    />
  );
}

/**
 * The REACT statechart panel. It has its own `ReactFlowProvider`, so its read-only graph never shares
 * a store with the editor's canvas.
 */
export function StatechartView(props: StatechartViewProps) {
  return (
    <section className="statechart" data-testid="statechart" data-current-state={props.current ?? ''}>
      <header className="panel-title">
        REACT statechart <span className="muted">({graph.machineId})</span>
        {props.current && <span className="chip" data-testid="statechart-current">{props.current}</span>}
      </header>
      <div className="statechart__canvas">
        <ReactFlowProvider>
          <StatechartDiagram {...props} />
        </ReactFlowProvider>
      </div>
    </section>
  );
}
