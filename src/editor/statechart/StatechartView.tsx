/**
 * The REACT statechart beside the flow: a read-only React Flow whose states and transitions come
 * from `reactMachine`'s definition, laid out for reading (statechartLayout.ts) and drawn at full
 * size, with the run's current state (from the log, `stateAfter`) and the transition just taken
 * highlighted; the ⤢ button shows the whole chart in a full-size view.
 */
import {
  BaseEdge,
  EdgeLabelRenderer,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  type Edge,
  type EdgeProps,
  type Node,
  type NodeProps,
} from '@xyflow/react';
import { memo, useEffect, useMemo, useState } from 'react';
import { reactMachine } from '../../machines/reactMachine.js';
import { ANY_STATE, statechartFromMachine, transitionTaken } from './statechartGraph.js';
import { layoutStatechart, type RoutedTransition } from './statechartLayout.js';

type StateNodeData = { label: string; final: boolean; initial: boolean; current: boolean; any: boolean };
type StateNode = Node<StateNodeData, 'state'>;
type ParentNode = Node<{ label: string }, 'parent'>;
type RoutedEdge = Edge<{ routed: RoutedTransition }, 'routed'>;

const graph = statechartFromMachine(reactMachine);
const chartLayout = layoutStatechart(graph);

function StateNodeView({ id, data }: NodeProps<StateNode>) {
  const classes = ['sc-state'];
  if (data.final) classes.push('sc-state--final');
  if (data.initial) classes.push('sc-state--initial');
  if (data.any) classes.push('sc-state--any');
  if (data.current) classes.push('is-current');
  return (
    <div className={classes.join(' ')} data-testid={`statechart-state-${data.any ? 'any' : id}`} data-current={data.current ? 'true' : 'false'}>
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
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

/** An arrow along the points the layout routed it through, its label where the layout left room for it. */
function RoutedEdgeView({ id, data, markerEnd, style }: EdgeProps<RoutedEdge>) {
  const routed = data?.routed;
  if (!routed) return null;
  const [first, ...rest] = routed.points;
  const path = first ? `M ${first.x} ${first.y} ${rest.map((point) => `L ${point.x} ${point.y}`).join(' ')}` : '';
  const box = routed.labelBox;
  return (
    <>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} style={style} />
      {box && routed.label && (
        <EdgeLabelRenderer>
          <div
            className="sc-label nodrag nopan"
            data-testid="statechart-label"
            title={routed.transition.labels.join(', ')}
            style={{ transform: `translate(${box.x}px, ${box.y}px)`, width: box.width, height: box.height }}
          >
            {routed.label}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

const stateNodeTypes = { state: memo(StateNodeView), parent: memo(ParentNodeView) };
const stateEdgeTypes = { routed: RoutedEdgeView };

/** The boxes of the parent states, behind the states in each. */
const parentNodes: ParentNode[] = [...chartLayout.parents].map(([parent, box]) => ({
  id: parent,
  type: 'parent',
  position: { x: box.x, y: box.y },
  style: { width: box.width, height: box.height },
  data: { label: parent },
  zIndex: -1,
  draggable: false,
  selectable: false,
}));

function edgeOf(routed: RoutedTransition, active: boolean): RoutedEdge {
  const { transition } = routed;
  return {
    id: transition.id,
    source: transition.source,
    target: transition.target,
    type: 'routed',
    data: { routed },
    className: ['sc-edge', transition.resume ? 'sc-edge--resume' : '', transition.trigger === 'any' ? 'sc-edge--any' : '', active ? 'is-taken' : '']
      .filter(Boolean)
      .join(' '),
    markerEnd: { type: MarkerType.ArrowClosed, width: 14, height: 14 },
    animated: active,
  };
}

/** The statechart view's props: the states to highlight, from the run's log. */
export interface StatechartViewProps {
  /** The state the run is in at the viewed position, if a run is shown. */
  readonly current: string | undefined;
  /** The state before it, to highlight the transition taken. */
  readonly previous: string | undefined;
}

/** The diagram's props: the run's states, and whether it fills the full-size view. */
interface StatechartDiagramProps extends StatechartViewProps {
  /** The full-size view shows the whole chart from its top; the panel follows the current state. */
  readonly full: boolean;
}

function StatechartDiagram({ current, previous, full }: StatechartDiagramProps) {
  const nodes = useMemo(
    (): (StateNode | ParentNode)[] => [
      ...parentNodes,
      ...[...chartLayout.states].map(([id, box]): StateNode => {
        const state = graph.states.find((candidate) => candidate.id === id);
        return {
          id,
          type: 'state',
          position: { x: box.x, y: box.y },
          style: { width: box.width, height: box.height },
          data: { label: id === ANY_STATE ? 'any state' : id, final: state?.final ?? false, initial: state?.initial ?? false, current: id === current, any: id === ANY_STATE },
          draggable: false,
          selectable: false,
        };
      }),
    ],
    [current],
  );
  const edges = useMemo(() => {
    const taken = transitionTaken(graph, previous, current);
    return chartLayout.transitions.map((routed) => edgeOf(routed, routed.transition.id === taken?.id));
  }, [current, previous]);
  const { setCenter } = useReactFlow();
  // Drawn at full size (never shrunk below legible): the panel shows the current state, or the
  // initial one, and is dragged to see the rest; the full-size view shows it all from the top.
  useEffect(() => {
    if (full) return;
    const focus = chartLayout.states.get(current ?? graph.states.find((state) => state.initial)?.id ?? '');
    if (focus) void setCenter(focus.x + focus.width / 2, focus.y + focus.height / 2, { zoom: 1 });
  }, [current, full, setCenter]);

  return (
    <ReactFlow
      nodes={nodes}
      edges={edges}
      nodeTypes={stateNodeTypes}
      edgeTypes={stateEdgeTypes}
      fitView={full}
      fitViewOptions={{ minZoom: 1, maxZoom: 1, padding: 0.02 }}
      minZoom={1}
      maxZoom={1}
      nodesDraggable={false}
      nodesConnectable={false}
      elementsSelectable={false}
      panOnDrag
      panOnScroll
      zoomOnScroll={false}
      zoomOnPinch={false}
      zoomOnDoubleClick={false}
      preventScrolling={full}
      proOptions={{ hideAttribution: true }}
    />
  );
}

/**
 * The REACT statechart panel. It has its own `ReactFlowProvider`, so its read-only graph never shares
 * a store with the editor's canvas.
 */
export function StatechartView(props: StatechartViewProps) {
  const [fullSize, setFullSize] = useState(false);
  return (
    <section className="statechart" data-testid="statechart" data-current-state={props.current ?? ''}>
      <header className="panel-title">
        REACT statechart <span className="muted">({graph.machineId})</span>
        {props.current && <span className="chip" data-testid="statechart-current">{props.current}</span>}
        <button type="button" className="btn btn--small btn--ghost statechart__enlarge" onClick={() => setFullSize(true)} data-testid="statechart-enlarge" title="show the whole statechart, full size">
          ⤢
        </button>
      </header>
      <div className="statechart__canvas">
        <ReactFlowProvider>
          <StatechartDiagram {...props} full={false} />
        </ReactFlowProvider>
      </div>
      {fullSize && (
        <div className="statechart-full" role="dialog" aria-label="REACT statechart, full size" data-testid="statechart-full">
          <header className="panel-title">
            REACT statechart <span className="muted">({graph.machineId})</span>
            {props.current && <span className="chip">{props.current}</span>}
            <button type="button" className="btn btn--small" onClick={() => setFullSize(false)} data-testid="statechart-close">
              Close
            </button>
          </header>
          <div className="statechart-full__canvas">
            <ReactFlowProvider>
              <StatechartDiagram {...props} full />
            </ReactFlowProvider>
          </div>
        </div>
      )}
    </section>
  );
}
