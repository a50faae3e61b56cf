/** The tools (`tool.http`, `tool.module`, `tool.postgres`, `tool.mcp`, `tool.client`, `tool.flow`) and subagents (`agent.ref`): one target handle on top, from the core above. */
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { NodeType } from '../../flows/nodeTypes.js';
import { TARGET_HANDLE, type ToolNode as ToolNodeType } from '../flow/editorNodes.js';
import { NodeRole } from '../../flows/nodeTypes.js';
import { NodeCard } from './NodeCard.js';
import { WaitPrompt } from '../run/WaitPrompt.js';

function summaryOf(node: ToolNodeType): string {
  switch (node.type) {
    case NodeType.ToolHttp:
      return `${node.data.config.method ?? 'GET'} ${node.data.config.url ?? ''}`;
    case NodeType.ToolModule:
      return node.data.config.module ?? 'no module';
    case NodeType.ToolPostgres:
      return node.data.config.query ?? 'no query';
    case NodeType.ToolMcp:
      return `MCP: ${node.data.config.url ?? [node.data.config.command, ...(node.data.config.args ?? [])].join(' ')}`;
    case NodeType.ToolClient:
      return 'run by the client';
    case NodeType.ToolFlow:
      return 'a Node-RED flow';
    case NodeType.AgentRef:
      return `subagent: ${node.data.config.flow ?? 'no flow'}`;
    case NodeType.AgentA2a:
      return `A2A: ${node.data.config.url ?? 'no url'}`;
  }
}

function ToolNode(props: NodeProps<ToolNodeType>) {
  const { id, type, data, selected } = props;
  const name = data.config.name ?? id;
  return (
    <NodeCard
      id={id}
      role={NodeRole.Tool}
      type={type}
      label={data.label ?? (name !== id ? name : undefined)}
      selected={selected}
      icon="⚙"
      summary={<span className="rf-node__mono">{summaryOf({ id, type, data, position: { x: 0, y: 0 } } as ToolNodeType)}</span>}
    >
      <Handle type="target" position={Position.Top} id={TARGET_HANDLE} title="agent.core → tool" />
      <WaitPrompt nodeId={id} />
    </NodeCard>
  );
}

export default memo(ToolNode);
