/** The tools connected to an agent core, as its Tools tab lists them. Pure. */
import { NodeType, isToolType } from '../../flows/nodeTypes.js';
import { flowTypeOf, type RedflowEdge, type RedflowNode } from './editorNodes.js';

/** Whether the model's input to a tool can be checked against a JSON Schema. */
export type ToolSchemaStatus = 'schema' | 'missing' | 'module';

/** One row of the Tools tab: a tool node connected to the core. */
export interface ConnectedTool {
  /** The tool node's id, to select it from the tab. */
  readonly nodeId: string;
  /** Its flow node type (`tool.http`, …). */
  readonly type: string;
  /** What the model calls it: `config.name`, else the node id. */
  readonly name: string;
  /** Whether the model's input to it can be checked, for the tab's schema warning. */
  readonly schema: ToolSchemaStatus;
}

/** The tool nodes with an edge from `coreId`, in node order. */
export function connectedTools(coreId: string, nodes: readonly RedflowNode[], edges: readonly RedflowEdge[]): ConnectedTool[] {
  const targets = new Set(edges.filter((edge) => edge.source === coreId).map((edge) => edge.target));
  return nodes
    .filter((node) => targets.has(node.id) && isToolType(flowTypeOf(node)))
    .map((node) => {
      const config = node.data.config as { name?: unknown; inputSchema?: unknown };
      const type = flowTypeOf(node);
      const schema: ToolSchemaStatus =
        type === NodeType.ToolModule ? 'module' : typeof config.inputSchema === 'object' && config.inputSchema !== null ? 'schema' : 'missing';
      return { nodeId: node.id, type, name: typeof config.name === 'string' && config.name !== '' ? config.name : node.id, schema };
    });
}

/** A tool's name for the model, for the run highlights (`config.name`, else undefined). */
export function toolNameOf(node: RedflowNode): string | undefined {
  const name = (node.data.config as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}
