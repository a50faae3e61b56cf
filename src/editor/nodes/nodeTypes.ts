/** The custom node components, by flow node type: defined once, at module scope (React Flow's rule). */
import type { NodeTypes } from '@xyflow/react';
import { NodeType } from '../../flows/nodeTypes.js';
import { UNKNOWN_NODE_TYPE } from '../flow/editorNodes.js';
import AgentCoreNode from './AgentCoreNode.js';
import MemoryNode from './MemoryNode.js';
import ModelNode from './ModelNode.js';
import OutputNode from './OutputNode.js';
import ToolNode from './ToolNode.js';
import TriggerInputNode from './TriggerInputNode.js';
import UnknownNode from './UnknownNode.js';

/**
 * React Flow's `nodeTypes`: the component of each flow node type (the tools share one, the outputs
 * another) and {@link UnknownNode} for a type Redflow does not know. One object for the app's
 * lifetime, since React Flow re-creates every node when `nodeTypes` changes identity.
 */
export const nodeTypes = {
  [NodeType.TriggerInput]: TriggerInputNode,
  [NodeType.AgentCore]: AgentCoreNode,
  [NodeType.ModelLlm]: ModelNode,
  [NodeType.ToolHttp]: ToolNode,
  [NodeType.ToolModule]: ToolNode,
  [NodeType.ToolPostgres]: ToolNode,
  [NodeType.ToolMcp]: ToolNode,
  [NodeType.ToolClient]: ToolNode,
  [NodeType.ToolFlow]: ToolNode,
  [NodeType.AgentRef]: ToolNode,
  [NodeType.AgentA2a]: ToolNode,
  [NodeType.MemoryKv]: MemoryNode,
  [NodeType.ResponseChat]: OutputNode,
  [NodeType.ResponseEnd]: OutputNode,
  [UNKNOWN_NODE_TYPE]: UnknownNode,
} satisfies NodeTypes;
