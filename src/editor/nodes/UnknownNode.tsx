/** A node of a type Redflow does not know: shown so the flow can be opened, fixed and saved. */
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { TARGET_HANDLE, type UnknownTypeNode } from '../flow/editorNodes.js';
import { NodeCard } from './NodeCard.js';

function UnknownNode({ id, data, selected }: NodeProps<UnknownTypeNode>) {
  return (
    <NodeCard id={id} role="unknown" type={data.flowType} label={data.label} selected={selected} icon="?" summary="unknown node type">
      <Handle type="target" position={Position.Left} id={TARGET_HANDLE} />
    </NodeCard>
  );
}

export default memo(UnknownNode);
