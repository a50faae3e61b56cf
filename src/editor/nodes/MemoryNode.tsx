/** `memory.kv`: conversation memory, wired both ways: from the core above, back to the core's left. */
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { EdgeKind } from '../../flows/nodeTypes.js';
import { TARGET_HANDLE, type MemoryKvNode } from '../flow/editorNodes.js';
import { NodeRole } from '../../flows/nodeTypes.js';
import { NodeCard } from './NodeCard.js';

function MemoryNode({ id, data, selected }: NodeProps<MemoryKvNode>) {
  const { store = 'memory', maxTurns = 20 } = data.config;
  return (
    <NodeCard id={id} role={NodeRole.Memory} type="memory.kv" label={data.label} selected={selected} icon="◎" summary={`${store} store · ${maxTurns} turns`}>
      <Handle type="target" position={Position.Top} id={TARGET_HANDLE} title="agent.core → memory" />
      <Handle type="source" position={Position.Right} id={EdgeKind.Memory} title="memory → agent.core" />
    </NodeCard>
  );
}

export default memo(MemoryNode);
