import path from 'node:path';
import type { ToolMcpConfig } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../errors.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from '../flows/diagnostics.js';
import { NodeType } from '../flows/nodeTypes.js';
import type { ResolvedFlow } from '../flows/validateFlow.js';
import { checkUniqueNames } from './buildTools.js';

/** What {@link checkMcpServers} found: the tools each server brings, and what stops a run. */
export interface McpServerCheck {
  /** By the node's name: the names the model would call its tools by. */
  readonly tools: Readonly<Record<string, readonly string[]>>;
  readonly errors: FlowDiagnostic[];
}

/**
 * Connects to each `tool.mcp` server of a valid flow, as a run would, lists the tools it brings
 * and closes it again: `redflow validate` reports a server that cannot start or a tool that
 * cannot be offered (each a coded error naming the node) before any run. Nothing is called.
 *
 * @example
 * ```ts
 * const { tools, errors } = await checkMcpServers(flow, path.dirname(flowPath));
 * // tools: { fs: ['fs_read_text_file', 'fs_list_directory'] }
 * ```
 */
export async function checkMcpServers(flow: ResolvedFlow, baseDir: string, env: NodeJS.ProcessEnv = process.env): Promise<McpServerCheck> {
  const servers = flow.tools.filter((tool) => tool.node.type === NodeType.ToolMcp);
  const tools: Record<string, string[]> = {};
  const errors: FlowDiagnostic[] = [];
  if (servers.length === 0) return { tools, errors };
  const { loadMcpTools } = await import('../actors/tools/mcpTools.js');
  for (const server of servers) {
    const nodeId = server.node.id;
    try {
      const loaded = await loadMcpTools(server.name, (server.node.config ?? {}) as ToolMcpConfig, { baseDir: path.resolve(baseDir), env });
      await loaded.close();
      tools[server.name] = loaded.tools.map((tool) => tool.name);
    } catch (error) {
      errors.push(asDiagnostic(error, nodeId));
    }
  }
  if (errors.length === 0) {
    const others = flow.tools.filter((tool) => tool.node.type !== NodeType.ToolMcp).map((tool) => tool.name);
    try {
      checkUniqueNames([...others, ...Object.values(tools).flat()], new Map(Object.entries(tools)));
    } catch (error) {
      errors.push(asDiagnostic(error, undefined));
    }
  }
  return { tools, errors };
}

function asDiagnostic(error: unknown, nodeId: string | undefined): FlowDiagnostic {
  const info = error instanceof RedflowError ? error.toInfo() : { code: ErrorCode.MCP_SERVER_UNAVAILABLE, message: String(error) };
  return flowDiagnostic(Severity.Error, info.code, info.message, { ...(info.hint !== undefined && { hint: info.hint }), ...(nodeId !== undefined && { nodeId }) });
}
