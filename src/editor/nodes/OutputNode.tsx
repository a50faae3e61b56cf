/** The outputs (`response.chat`, `response.end`): one target handle on the left, from the core. */
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { NodeType } from '../../flows/nodeTypes.js';
import { TARGET_HANDLE, type ResponseNode } from '../flow/editorNodes.js';
import { NodeRole } from '../../flows/nodeTypes.js';
import { NodeCard } from './NodeCard.js';

function OutputNode({ id, type, data, selected }: NodeProps<ResponseNode>) {
  const summary = type === NodeType.ResponseChat ? `chat · ${(data.config as { format?: string }).format ?? 'text'}` : 'end of flow';
  return (
    <NodeCard id={id} role={NodeRole.Output} type={type} label={data.label} selected={selected} icon="✉" summary={summary}>
      <Handle type="target" position={Position.Left} id={TARGET_HANDLE} title="agent.core → output" />
    </NodeCard>
  );
}

export default memo(OutputNode);
