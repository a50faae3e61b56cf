import type { ToolMcpConfig } from '../../contracts/schema-types.js';
import { compileUserSchema } from '../../contracts/schemas.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import type { ToolDefinition } from '../tool.js';
import { type McpConnection, type McpListedTool, openMcpConnection } from './mcpConnection.js';
import { mcpObservation } from './mcpResult.js';

/** Limit of one call when the node sets no `timeoutMs`. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 30_000;
/** Largest result of one call (its JSON) when the node sets no `maxResultBytes`: what `tool.http` reads at most. */
export const DEFAULT_MCP_MAX_RESULT_BYTES = 1_048_576;

/** What the model may call a tool (the flow schema's tool name). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** An MCP server's tools, ready to serve, and the connection they share. */
export interface McpTools {
  /** In the server's order, named `<prefix><name>`. */
  readonly tools: readonly ToolDefinition[];
  /** Ends the connection (stops a stdio server). Never rejects. */
  close(): Promise<void>;
}

/** Options of {@link loadMcpTools}. */
export interface McpToolsOptions {
  /** The flow file's folder: a relative `cwd` starts here. */
  readonly baseDir: string;
  /** Where `$NAME` env values and `headersFromEnv` are read (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Connects to a `tool.mcp` node's server, lists its tools and makes each one a Redflow tool: its
 * name (with the node's `prefix`), description and input schema, picked by `include` / `exclude`.
 * A tool whose name is not a valid Redflow tool name (`MCP_TOOL_NAME_INVALID`) or whose input
 * schema does not compile (`MCP_TOOL_SCHEMA_INVALID`), or an `include` entry the server does not
 * list (`MCP_TOOL_NOT_FOUND`), stops here, before any run starts; a server that cannot be reached
 * is `MCP_SERVER_UNAVAILABLE`. The connection is closed on every such failure.
 *
 * @example
 * ```ts
 * const { tools, close } = await loadMcpTools('everything', { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], include: ['echo'] }, { baseDir: '.' });
 * await tools[0].execute({ message: 'hi' }, context); // 'Echo: hi'
 * await close();
 * ```
 */
export async function loadMcpTools(name: string, config: ToolMcpConfig, options: McpToolsOptions): Promise<McpTools> {
  const maxResultBytes = config.maxResultBytes ?? DEFAULT_MCP_MAX_RESULT_BYTES;
  const connection = openMcpConnection({
    name,
    config,
    baseDir: options.baseDir,
    ...(options.env && { env: options.env }),
    // A stdio message can carry base64 images the observation only describes: read more than is kept.
    maxMessageBytes: Math.max(maxResultBytes * 4, 10 * 1024 * 1024 - 1),
  });
  try {
    const listed = await connection.tools();
    const picked = pickTools(name, config, listed);
    return { tools: picked.map((tool) => asRedflowTool(tool, name, config, connection, maxResultBytes)), close: () => connection.close() };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** The listed tools that `include` and `exclude` keep, each checked. */
function pickTools(server: string, config: ToolMcpConfig, listed: readonly McpListedTool[]): McpListedTool[] {
  const names = new Set(listed.map((tool) => tool.name));
  for (const wanted of config.include ?? []) {
    if (names.has(wanted)) continue;
    throw new RedflowError(
      errorInfo(ErrorCode.MCP_TOOL_NOT_FOUND, `MCP server '${server}' has no tool '${wanted}' (it lists: ${[...names].join(', ') || 'none'})`, {
        hint: 'fix the node\'s "include" list: it names tools as the server lists them, without the prefix',
      }),
    );
  }
  const include = config.include && new Set(config.include);
  const exclude = new Set(config.exclude ?? []);
  const kept = listed.filter((tool) => (!include || include.has(tool.name)) && !exclude.has(tool.name));
  for (const tool of kept) checkTool(server, config.prefix ?? '', tool);
  return kept;
}

function checkTool(server: string, prefix: string, tool: McpListedTool): void {
  const name = `${prefix}${tool.name}`;
  if (!TOOL_NAME.test(name)) {
    throw new RedflowError(
      errorInfo(ErrorCode.MCP_TOOL_NAME_INVALID, `MCP server '${server}' lists a tool '${tool.name}' whose name ${JSON.stringify(name)} is not a valid tool name (1 to 64 letters, digits, '_' or '-')`, {
        hint: `add '${tool.name}' to the node's "exclude" list, or shorten the "prefix"`,
      }),
    );
  }
  try {
    if (typeof tool.inputSchema !== 'object' || tool.inputSchema === null) throw new Error('it is not an object');
    compileUserSchema(tool.inputSchema);
  } catch (error) {
    throw new RedflowError(
      errorInfo(ErrorCode.MCP_TOOL_SCHEMA_INVALID, `MCP server '${server}' lists a tool '${tool.name}' whose input schema is not a valid JSON Schema: ${(error as Error).message}`, {
        hint: `add '${tool.name}' to the node's "exclude" list, or fix the tool's inputSchema in the server`,
      }),
    );
  }
}

function asRedflowTool(tool: McpListedTool, server: string, config: ToolMcpConfig, connection: McpConnection, maxResultBytes: number): ToolDefinition {
  const name = `${config.prefix ?? ''}${tool.name}`;
  const timeoutMs = config.timeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS;
  return {
    name,
    description: tool.description ?? tool.title ?? `${tool.name}, a tool of the MCP server ${server}`,
    inputSchema: tool.inputSchema,
    async execute(input, context) {
      const { progress } = context;
      const result = await connection.call(tool.name, input, {
        signal: context.signal,
        timeoutMs,
        idempotencyKey: context.idempotencyKey,
        // The server's progress notifications are the call's activity (`tool_progress`).
        ...(progress && { onProgress: progress }),
      });
      return mcpObservation(result, name, maxResultBytes);
    },
  };
}
