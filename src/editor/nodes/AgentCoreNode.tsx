/**
 * `agent.core`: the orchestrator. It receives on the left (input, memory), asks the model above,
 * calls tools below, remembers bottom-left, and answers on the right.
 */
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { EdgeKind } from '../../flows/nodeTypes.js';
import { TARGET_HANDLE, type AgentCoreNode as AgentCoreNodeType } from '../flow/editorNodes.js';
import { NodeRole } from '../../flows/nodeTypes.js';
import { NodeCard } from './NodeCard.js';

function AgentCoreNode({ id, data, selected }: NodeProps<AgentCoreNodeType>) {
  const { maxIterations = 5, debug } = data.config;
  const tools = data.config.allowedTools;
  return (
    <NodeCard
      id={id}
      role={NodeRole.Core}
      type="agent.core"
      label={data.label}
      selected={selected}
      icon="◆"
      summary={
        <>
          react · max {maxIterations} · {tools ? `${tools.length} allowed tool${tools.length === 1 ? '' : 's'}` : 'all connected tools'}
          {debug ? ' · debug' : ''}
        </>
      }
    >
      <Handle type="target" position={Position.Left} id={TARGET_HANDLE} title="input / memory → agent.core" />
      <Handle type="source" position={Position.Top} id={EdgeKind.Model} title="agent.core → model" />
      <Handle type="source" position={Position.Bottom} id={EdgeKind.Tool} style={{ left: '68%' }} title="agent.core → tool" />
      <Handle type="source" position={Position.Bottom} id={EdgeKind.Memory} style={{ left: '28%' }} title="agent.core → memory" />
      <Handle type="source" position={Position.Right} id={EdgeKind.Data} title="agent.core → output" />
      <span className="rf-handle-label rf-handle-label--model">model</span>
      <span className="rf-handle-label rf-handle-label--tool">tools</span>
      <span className="rf-handle-label rf-handle-label--memory">memory</span>
    </NodeCard>
  );
}

export default memo(AgentCoreNode);
