/**
 * The flow canvas: custom nodes, drag and drop from the palette, and one `isValidConnection` that
 * applies the flow's edge rules (`checkConnection`, shared with validation). A refused attempt
 * says why, in a toast, when the connection ends, naming the handles that would fit; a connection
 * dropped on a node's body joins the one handle of it that fits.
 */
import {
  Background,
  BackgroundVariant,
  Controls,
  MiniMap,
  ReactFlow,
  addEdge,
  useReactFlow,
  type Connection,
  type Edge,
  type FinalConnectionState,
  type OnEdgesChange,
  type OnNodesChange,
} from '@xyflow/react';
import { useCallback, useState, type Dispatch, type DragEvent, type SetStateAction } from 'react';
import { ErrorCode } from '../../errors.js';
import { isNodeType, roleOf } from '../../flows/nodeTypes.js';
import { checkEditorConnection } from '../flow/connections.js';
import { describeHandle, explainHandle, fittingHandlesOn, roleName, type HandleEnd } from '../flow/handleHints.js';
import { TARGET_HANDLE, flowTypeOf, type RedflowEdge, type RedflowNode } from '../flow/editorNodes.js';
import { edgeClassName, newEdgeId } from '../flow/flowDocument.js';
import { PALETTE_DRAG_TYPE, defaultConfig, newNodeId } from '../flow/palette.js';
import { nodeTypes } from '../nodes/nodeTypes.js';
import { ConnectionToast, type RefusedConnection } from './ConnectionToast.js';
import { FIT_VIEW_OPTIONS } from './fitView.js';

/**
 * The canvas's props: the graph is controlled (the app's `useNodesState` / `useEdgesState`), and
 * the setters are passed too because a drop or a connection writes to it directly.
 */
export interface FlowCanvasProps {
  readonly nodes: RedflowNode[];
  readonly edges: RedflowEdge[];
  readonly onNodesChange: OnNodesChange<RedflowNode>;
  readonly onEdgesChange: OnEdgesChange<RedflowEdge>;
  readonly setNodes: Dispatch<SetStateAction<RedflowNode[]>>;
  readonly setEdges: Dispatch<SetStateAction<RedflowEdge[]>>;
}

/** The id of the flow node under the point where a connection ended, if any. */
function nodeIdAt(event: MouseEvent | TouchEvent): string | undefined {
  const point = 'changedTouches' in event ? event.changedTouches[0] : event;
  if (!point) return undefined;
  for (const element of document.elementsFromPoint(point.clientX, point.clientY)) {
    const node = element.closest('[data-testid="canvas"] .react-flow__node');
    const id = node?.getAttribute('data-id');
    if (id) return id;
  }
  return undefined;
}

/** Half a node's size: a dropped node is centred on the pointer. */
const DROP_OFFSET = { x: 90, y: 30 };

/**
 * The editable flow graph. A dropped palette item becomes a new node, selected alone; a connection
 * the edge rules allow becomes an edge of its kind. Must be inside a `ReactFlowProvider`.
 */
export function FlowCanvas({ nodes, edges, onNodesChange, onEdgesChange, setNodes, setEdges }: FlowCanvasProps) {
  const { screenToFlowPosition, getNode } = useReactFlow<RedflowNode, RedflowEdge>();
  const [refusal, setRefusal] = useState<RefusedConnection>();
  const dismiss = useCallback(() => setRefusal(undefined), []);

  const typeOf = useCallback((id: string) => {
    const node = getNode(id);
    return node ? flowTypeOf(node) : undefined;
  }, [getNode]);

  const isValidConnection = useCallback((connection: Connection | Edge) => checkEditorConnection(connection, typeOf).ok, [typeOf]);

  const onConnect = useCallback(
    (connection: Connection) => {
      const check = checkEditorConnection(connection, typeOf);
      if (!check.ok) return;
      setRefusal(undefined);
      setEdges((current) =>
        addEdge(
          {
            ...connection,
            targetHandle: TARGET_HANDLE,
            id: newEdgeId(connection.source, connection.target, new Set(current.map((edge) => edge.id))),
            className: edgeClassName(check.kind),
            data: { kind: check.kind },
          },
          current,
        ),
      );
    },
    [setEdges, typeOf],
  );

  const endOf = useCallback(
    (nodeId: string, handleId: string | null | undefined, type: 'source' | 'target'): HandleEnd | undefined => {
      const nodeType = typeOf(nodeId);
      const role = nodeType === undefined ? undefined : roleOf(nodeType);
      return role === undefined ? undefined : { role, handleId: handleId ?? '', type };
    },
    [typeOf],
  );

  /** A connection dropped on a node's body joins the one handle of it that fits, or says why it cannot. */
  const connectToBody = useCallback(
    (from: HandleEnd, fromNodeId: string, toNodeId: string) => {
      const toType = typeOf(toNodeId);
      const toRole = toType === undefined ? undefined : roleOf(toType);
      if (toRole === undefined) return;
      const fits = fittingHandlesOn(toRole, from);
      const [fit] = fits;
      if (fits.length === 1 && fit) {
        const [source, target] = from.type === 'source' ? [{ node: fromNodeId, handle: from.handleId }, { node: toNodeId, handle: fit.handleId }] : [{ node: toNodeId, handle: fit.handleId }, { node: fromNodeId, handle: from.handleId }];
        onConnect({ source: source.node, sourceHandle: source.handle, target: target.node, targetHandle: target.handle });
        return;
      }
      const message =
        fits.length === 0
          ? `the ${roleName(toRole)} has no handle this connection fits: ${explainHandle(from)}`
          : `drop it on one of the ${roleName(toRole)}'s handles: ${fits.map(describeHandle).join(', ')}`;
      setRefusal({ code: ErrorCode.EDGE_NOT_ALLOWED, message, at: Date.now() });
    },
    [onConnect, typeOf],
  );

  const onConnectEnd = useCallback(
    (event: MouseEvent | TouchEvent, state: FinalConnectionState) => {
      if (state.isValid === true || !state.fromNode || !state.fromHandle) return;
      const from = endOf(state.fromNode.id, state.fromHandle.id, state.fromHandle.type);
      if (!state.toHandle) {
        // Not on a handle: on a node's body (another node), or on the empty canvas (nothing to say).
        const toNodeId = nodeIdAt(event);
        if (from && toNodeId !== undefined && toNodeId !== state.fromNode.id) connectToBody(from, state.fromNode.id, toNodeId);
        return;
      }
      if (state.isValid !== false || !state.toNode) return;
      const to = endOf(state.toNode.id, state.toHandle.id, state.toHandle.type);
      const explained = from && to ? `${explainHandle(from)}, not ${describeHandle(to)}` : undefined;
      if (state.fromHandle.type === state.toHandle.type) {
        setRefusal({
          code: ErrorCode.EDGE_NOT_ALLOWED,
          message: explained ?? `drag from a node's outgoing handle to another node's incoming handle`,
          detail: `both ends here are ${state.fromHandle.type} handles`,
          at: Date.now(),
        });
        return;
      }
      const fromSource = state.fromHandle.type === 'source';
      const source = fromSource ? state.fromHandle : state.toHandle;
      const target = fromSource ? state.toHandle : state.fromHandle;
      const check = checkEditorConnection({ source: source.nodeId, sourceHandle: source.id ?? null, target: target.nodeId, targetHandle: target.id ?? null }, typeOf);
      if (!check.ok) setRefusal({ code: check.code, message: explained ?? check.message, ...(explained !== undefined && { detail: check.message }), at: Date.now() });
    },
    [connectToBody, endOf, typeOf],
  );

  const onDragOver = useCallback((event: DragEvent) => {
    event.preventDefault();
    event.dataTransfer.dropEffect = 'move';
  }, []);

  const onDrop = useCallback(
    (event: DragEvent) => {
      event.preventDefault();
      const type = event.dataTransfer.getData(PALETTE_DRAG_TYPE) || event.dataTransfer.getData('text/plain');
      if (!isNodeType(type)) return;
      const point = screenToFlowPosition({ x: event.clientX, y: event.clientY });
      const position = { x: point.x - DROP_OFFSET.x, y: point.y - DROP_OFFSET.y };
      setNodes((current) => {
        const id = newNodeId(type, new Set(current.map((node) => node.id)));
        const node = { id, type, position, selected: true, data: { config: defaultConfig(type) } } as RedflowNode;
        return [...current.map((other) => (other.selected ? { ...other, selected: false } : other)), node];
      });
    },
    [screenToFlowPosition, setNodes],
  );

  return (
    <div className="canvas" data-testid="canvas" onDragOver={onDragOver} onDrop={onDrop}>
      <ReactFlow<RedflowNode, RedflowEdge>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onConnectEnd={onConnectEnd}
        isValidConnection={isValidConnection}
        deleteKeyCode={['Backspace', 'Delete']}
        defaultEdgeOptions={{ type: 'smoothstep' }}
        minZoom={0.3}
        fitViewOptions={FIT_VIEW_OPTIONS}
      >
        <Background variant={BackgroundVariant.Dots} gap={18} size={1} />
        <Controls showInteractive={false} />
        <MiniMap position="top-right" pannable zoomable nodeStrokeWidth={3} style={{ width: 132, height: 90 }} />
      </ReactFlow>
      <ConnectionToast refusal={refusal} onDismiss={dismiss} />
    </div>
  );
}
