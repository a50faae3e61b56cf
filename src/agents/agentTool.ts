import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { ToolMcpConfig, ToolSpec } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { ToolContext, ToolDefinition } from '../actors/tool.js';
import { checkAgainst, isStandardSchema, type AgentSchema, type JsonSchema, type SchemaOutput } from './schemaCheck.js';
import { requireJsonSchema } from './schemaToJson.js';
import type { McpTools } from '../actors/tools/mcpTools.js';

/**
 * A tool of an agent definition, run by Redflow in the definition's process. Its `inputSchema` is a
 * Standard Schema (zod 4, valibot, arktype, …) or a JSON Schema: the model is shown its JSON Schema,
 * the run checks the model's input against it, and a Standard Schema then checks it again, `execute`
 * receiving what the schema gives (its output type: parsed, defaults filled in). An input the
 * Standard Schema refuses is the call's failure (`TOOL_INPUT_INVALID`, with the schema's messages),
 * the model's next observation. Make one with {@link defineTool} to have `execute` typed.
 *
 * A plain {@link ToolDefinition} (a JSON Schema and `execute`) is one too.
 *
 * @example
 * ```ts
 * const lookup: AgentTool = defineTool({
 *   name: 'lookup_order',
 *   description: 'Finds an order by id',
 *   inputSchema: z.object({ orderId: z.string() }),
 *   execute: async ({ orderId }) => ({ orderId, status: 'shipped' }),
 * });
 * ```
 */
export interface AgentTool<Input extends AgentSchema = AgentSchema, Return = unknown> {
  /** 1–64 letters, digits, `_` or `-`; unique among the definition's tools. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Input;
  /**
   * What `execute` must return, checked on each result: one that does not match is the call's
   * failure (`TOOL_OUTPUT_INVALID`), which the model sees, never the run's. With a Standard Schema,
   * the model is given the value it gives. `execute` must return what it takes.
   */
  readonly outputSchema?: StandardSchemaV1<Return, unknown> | JsonSchema;
  /** Every call waits for a person to approve or deny it before it is made (the agent's `requiresApproval`). */
  readonly requiresApproval?: boolean;
  readonly executor?: undefined;
  execute(input: SchemaOutput<Input, Record<string, unknown>>, context: ToolContext): Promise<Return> | Return;
}

/**
 * A tool the run's client executes (a browser, an app, a script), as a flow's `tool.client` node: no
 * `execute`. A call of it is recorded and the run waits for its result (`redflow tool-result`, the
 * HTTP API, `AgentExecutor.resume` with an answer), which is the model's next observation.
 */
export interface ClientTool<Input extends AgentSchema = AgentSchema> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Input;
  readonly executor: 'client';
  /** Every call waits for a person's approval first, then for the client. */
  readonly requiresApproval?: boolean;
}

/** Any tool a definition's `toolConfig.tools` holds: each tool's types are its own. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type DefinitionTool = AgentTool<any, any> | ClientTool<any>;

/**
 * Keeps a tool's types: `execute` receives the input its `inputSchema` gives (a Standard Schema's
 * output type), and must return what its `outputSchema` takes. Returns `tool` itself.
 *
 * @example
 * ```ts
 * const lookupOrder = defineTool({
 *   name: 'lookup_order',
 *   description: 'Finds an order by its id',
 *   inputSchema: z.object({ order: z.string().regex(/^[A-Z]-\d{4}$/) }),
 *   execute: ({ order }) => ({ order, status: 'shipped' }), // order: string
 * });
 * ```
 */
// `const`: a literal the tool returns ('shipped') keeps its type, so it can match an outputSchema's enum.
export function defineTool<Input extends AgentSchema, const Return = unknown>(tool: AgentTool<Input, Return>): AgentTool<Input, Return>;
export function defineTool<Input extends AgentSchema>(tool: ClientTool<Input>): ClientTool<Input>;
export function defineTool(tool: DefinitionTool): DefinitionTool {
  return tool;
}

/** True for a tool the client runs. */
export function isClientTool(tool: DefinitionTool): tool is ClientTool {
  return tool.executor === 'client';
}

/** The spec of a checked definition's tool, as the run records it: its JSON Schema, and `executor` for a client's. */
export function toolSpecOf(tool: DefinitionTool): ToolSpec {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: requireJsonSchema(tool.inputSchema as AgentSchema),
    ...(isClientTool(tool) && { executor: 'client' as const }),
  };
}

/**
 * A checked definition's tool as the runtime serves it: its JSON Schema, and an `execute` that
 * checks the input with a Standard Schema (the run checked the JSON Schema already), calls the
 * tool with what the schema gives, and checks the result against `outputSchema`. A refusal throws
 * a coded error, which the tool's actor turns into the call's failure: an observation, never a
 * crash. It runs on every call, a resumed run's too, so a resumed run checks as the first did.
 */
export function servedToolOf(tool: AgentTool): ToolDefinition {
  const { name, inputSchema, outputSchema } = tool;
  return {
    name,
    description: tool.description,
    inputSchema: requireJsonSchema(inputSchema),
    async execute(input, context) {
      let value: unknown = input;
      if (isStandardSchema(inputSchema)) {
        const checked = await checkAgainst(inputSchema, input);
        if (!checked.ok) {
          throw new RedflowError(
            errorInfo(ErrorCode.TOOL_INPUT_INVALID, `the input for "${name}" does not match its schema: ${checked.issues.join('; ')}`, {
              hint: `call ${name} again with an input its schema takes`,
            }),
          );
        }
        value = checked.value;
      }
      const output: unknown = await tool.execute(value as never, context);
      if (outputSchema === undefined) return output;
      const checked = await checkAgainst(outputSchema, output);
      if (!checked.ok) {
        throw new RedflowError(
          errorInfo(ErrorCode.TOOL_OUTPUT_INVALID, `tool "${name}" returned an output that does not match its outputSchema: ${checked.issues.join('; ')}`, {
            hint: `the tool broke its promise: fix ${name} (or its outputSchema); the model sees this as the call's failure`,
          }),
        );
      }
      return checked.value;
    },
  };
}

/**
 * What {@link mcpTools} takes: a `tool.mcp` node's config, its `name` (how errors name the server) and where it runs.
 *
 * @example
 * ```ts
 * const config: McpToolsConfig = { name: 'everything', url: 'http://127.0.0.1:3001/mcp', include: ['echo'] };
 * ```
 */
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
export async function mcpTools(config: McpToolsConfig): Promise<McpTools> {
  const { name, baseDir, env, ...node } = config;
  // Loaded on first use: `import 'redflow'` stays light for code that uses no MCP server.
  const { loadMcpTools } = await import('../actors/tools/mcpTools.js');
  return loadMcpTools(name, node, { baseDir: baseDir ?? process.cwd(), ...(env && { env }) });
}
