import type { ToolMcpConfig } from '../contracts/schema-types.js';
import { loadMcpTools, type McpTools } from '../actors/tools/mcpTools.js';

/** What {@link mcpTools} takes: a `tool.mcp` node's config, its `name` (how errors name the server) and where it runs. */
export type McpToolsConfig = ToolMcpConfig & {
  /** How errors name the server. */
  readonly name: string;
  /** A relative `cwd` starts here (default: the process's working folder). */
  readonly baseDir?: string;
  /** Where `$NAME` env values and `headersFromEnv` are read (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
};

/**
 * Connects to an MCP server (stdio or Streamable HTTP) and gives its tools as Redflow tools, for an
 * agent definition's `toolConfig.tools` (or `serveActors`): the same tools a flow's `tool.mcp`
 * node brings, with the same checks and errors. Close them when the agent is done: a stdio server
 * is stopped then.
 *
 * @throws RedflowError `MCP_SERVER_UNAVAILABLE`, `MCP_TOOL_NAME_INVALID`, `MCP_TOOL_SCHEMA_INVALID`, `MCP_TOOL_NOT_FOUND`.
 * @example
 * ```ts
 * const files = await mcpTools({ name: 'files', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'], prefix: 'fs_' });
 * try {
 *   const result = await new AgentExecutor().execute({ ...definition, toolConfig: { tools: [...files.tools] } });
 * } finally {
 *   await files.close();
 * }
 * ```
 */
export function mcpTools(config: McpToolsConfig): Promise<McpTools> {
  const { name, baseDir, env, ...node } = config;
  return loadMcpTools(name, node, { baseDir: baseDir ?? process.cwd(), ...(env && { env }) });
}

export type { McpTools } from '../actors/tools/mcpTools.js';
