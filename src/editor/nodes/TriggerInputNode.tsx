/** `trigger.input`: the run's input. One source handle, to the agent core. */
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { EdgeKind } from '../../flows/nodeTypes.js';
import type { TriggerInputNode as TriggerInputNodeType } from '../flow/editorNodes.js';
import { NodeRole } from '../../flows/nodeTypes.js';
import { NodeCard } from './NodeCard.js';

function TriggerInputNode({ id, data, selected }: NodeProps<TriggerInputNodeType>) {
  const schema = data.config.inputSchema !== undefined;
  return (
    <NodeCard id={id} role={NodeRole.Input} type="trigger.input" label={data.label} selected={selected} icon="▶" summary={schema ? 'input schema set' : 'any input'}>
      <Handle type="source" position={Position.Right} id={EdgeKind.Data} title="data → agent.core" />
    </NodeCard>
  );
}

export default memo(TriggerInputNode);
