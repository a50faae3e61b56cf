/**
 * `model.llm`: the model the agent core asks, one target handle below (from the core above it);
 * while a run is followed live, its answer as the model writes it, above the card.
 */
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { TARGET_HANDLE, type ModelLlmNode } from '../flow/editorNodes.js';
import { NodeRole } from '../../flows/nodeTypes.js';
import { NodeCard } from './NodeCard.js';
import { LiveAnswerOnNode } from '../run/LiveAnswerView.js';

function ModelNode({ id, data, selected }: NodeProps<ModelLlmNode>) {
  const { provider = 'openai', model, answers, answersFile } = data.config;
  const summary =
    provider === 'scripted'
      ? `scripted · ${answers ? `${answers.length} answer${answers.length === 1 ? '' : 's'}` : (answersFile ?? 'no answers')}`
      : `${provider}${model ? ` · ${model}` : ''}`;
  return (
    <NodeCard id={id} role={NodeRole.Model} type="model.llm" label={data.label} selected={selected} icon="✦" summary={summary}>
      <Handle type="target" position={Position.Bottom} id={TARGET_HANDLE} title="agent.core → model" />
      <LiveAnswerOnNode nodeId={id} />
    </NodeCard>
  );
}

export default memo(ModelNode);
