import type { FlowNode } from '../contracts/schema-types.js';
import { compileUserSchema, validators } from '../contracts/schemas.js';
import { ErrorCode } from '../errors.js';
import { type FlowDiagnostic, Severity, describeValue, explainSchemaErrors, flowDiagnostic } from './diagnostics.js';
import { isKnownProvider, unknownProvider } from '../actors/models/modelProviders.js';
import { NodeType, type NodeRole } from './nodeTypes.js';
import { parseSqlParameters, undeclaredParameters } from '../actors/tools/sqlParameters.js';

// The rules of one node of a flow, each on its own: its config (by its type's schema and what the
// schema cannot say) and, for a tool, the name the model calls it by. validateFlow applies them
// to every node, then checks the graph.

/** What a tool name (given or taken from the node id) must look like (`ToolCommonConfig.name`). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

type ConfigValidator = ((value: unknown) => boolean) & { errors?: Parameters<typeof explainSchemaErrors>[1] };

/** The config validator of each node type except `agent.core`, which has its own check (compiled on first use). */
const CONFIG_VALIDATORS: { readonly [T in Exclude<NodeType, typeof NodeType.AgentCore>]: () => ConfigValidator } = {
  [NodeType.TriggerInput]: () => validators.triggerInputConfig,
  [NodeType.ModelLlm]: () => validators.modelLlmConfig,
  [NodeType.MemoryKv]: () => validators.memoryKvConfig,
  [NodeType.ToolHttp]: () => validators.toolHttpConfig,
  [NodeType.ToolModule]: () => validators.toolModuleConfig,
  [NodeType.ToolPostgres]: () => validators.toolPostgresConfig,
  [NodeType.ToolMcp]: () => validators.toolMcpConfig,
  [NodeType.ToolClient]: () => validators.toolClientConfig,
  [NodeType.ToolFlow]: () => validators.toolFlowConfig,
  [NodeType.AgentRef]: () => validators.agentRefConfig,
  [NodeType.AgentA2a]: () => validators.agentA2aConfig,
  [NodeType.ResponseChat]: () => validators.responseChatConfig,
  [NodeType.ResponseEnd]: () => validators.responseEndConfig,
};

/**
 * A node of the flow with where it is.
 *
 * @example
 * ```ts
 * const placed: PlacedNode = { node, index, path: `nodes[${node.id}]`, role: roleOf(node.type), config: node.config ?? {} };
 * ```
 */
export interface PlacedNode {
  readonly node: FlowNode;
  readonly index: number;
  readonly path: string;
  /** Undefined for an unknown type (already reported). */
  readonly role: NodeRole | undefined;
  readonly config: Readonly<Record<string, unknown>>;
}

/**
 * A tool node with its resolved name.
 *
 * @example
 * ```ts
 * const tool: PlacedTool = placeTool(placed, errors);
 * ```
 */
export interface PlacedTool extends PlacedNode {
  readonly name: string;
  readonly hasInputSchema: boolean;
}

/**
 * A node's config checked against its type's schema, and what the schema cannot say: a model's
 * provider, a user's input schema that must compile, a `tool.postgres` query, a `tool.mcp` transport.
 *
 * @example
 * ```ts
 * errors.push(...checkNodeConfig(placed));
 * ```
 */
export function checkNodeConfig(placed: PlacedNode): FlowDiagnostic[] {
  const type = placed.node.type as Exclude<NodeType, typeof NodeType.AgentCore>;
  const validate = CONFIG_VALIDATORS[type]();
  const found: FlowDiagnostic[] = [];
  const configPath = `${placed.path}.config`;
  // An unknown model provider gets its own code and the list of known ones; the rest is checked without it.
  let config = placed.config;
  if (type === NodeType.ModelLlm && !isKnownProvider(config.provider)) {
    const { message, hint } = unknownProvider(config.provider);
    found.push(flowDiagnostic(Severity.Error, ErrorCode.MODEL_PROVIDER_UNKNOWN, `${type} node '${placed.node.id}': ${message}`, { hint, path: `${configPath}.provider`, nodeId: placed.node.id }));
    config = Object.fromEntries(Object.entries(config).filter(([key]) => key !== 'provider'));
  }
  const valid = validate(config);
  if (!valid) {
    const { message, path } = explainSchemaErrors(configPath, validate.errors);
    found.push(
      flowDiagnostic(Severity.Error, ErrorCode.NODE_CONFIG_INVALID, `${type} node '${placed.node.id}' config is invalid: ${message}`, {
        hint: `fix the config of node '${placed.node.id}'; see the ${type} config in schemas/flow.schema.json`,
        path,
        nodeId: placed.node.id,
      }),
    );
  }
  // Input schemas that users write (tools, trigger) must compile, or every run would fail on them.
  if (type === NodeType.ToolHttp || type === NodeType.ToolPostgres || type === NodeType.ToolClient || type === NodeType.ToolFlow || type === NodeType.TriggerInput) {
    const schema = Object.hasOwn(placed.config, 'inputSchema') ? placed.config.inputSchema : undefined;
    if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) {
      const problem = userSchemaProblem(schema);
      if (problem !== undefined) {
        found.push(
          flowDiagnostic(
            Severity.Error,
            ErrorCode.NODE_CONFIG_INVALID,
            `${type} node '${placed.node.id}' has an inputSchema that is not a valid JSON Schema: ${problem}`,
            { hint: 'fix config.inputSchema (JSON Schema draft-07)', path: `${configPath}.inputSchema`, nodeId: placed.node.id },
          ),
        );
      }
    }
  }
  if (type === NodeType.ToolPostgres && valid) found.push(...checkPostgresQuery(placed, configPath));
  if (type === NodeType.ToolMcp && valid) found.push(...mcpTransportProblems(placed.node.id, placed.config, configPath));
  return found;
}

/**
 * A `tool.postgres` query must parse (one statement, `:name` parameters, nothing unterminated),
 * and its input schema must declare every parameter: the values are typed by it.
 */
function checkPostgresQuery(placed: PlacedNode, configPath: string): FlowDiagnostic[] {
  const { query, inputSchema } = placed.config as { query: string; inputSchema: unknown };
  const parsed = parseSqlParameters(query);
  if (!parsed.ok) {
    return [
      flowDiagnostic(
        Severity.Error,
        ErrorCode.NODE_CONFIG_INVALID,
        `${NodeType.ToolPostgres} node '${placed.node.id}' has a query that cannot be used: ${parsed.message} (at character ${parsed.index + 1})`,
        {
          hint: 'write one SQL statement with :name parameters (bound from the input, never interpolated)',
          path: `${configPath}.query`,
          nodeId: placed.node.id,
        },
      ),
    ];
  }
  const undeclared = undeclaredParameters(parsed.sql.parameters, inputSchema);
  if (undeclared.length === 0) return [];
  return [
    flowDiagnostic(
      Severity.Error,
      ErrorCode.NODE_CONFIG_INVALID,
      `${NodeType.ToolPostgres} node '${placed.node.id}': inputSchema does not declare the query parameter${undeclared.length === 1 ? '' : 's'} ${undeclared.map((name) => `:${name}`).join(', ')}`,
      {
        hint: 'add each parameter to config.inputSchema.properties (and to "required" unless it may be missing)',
        path: `${configPath}.inputSchema`,
        nodeId: placed.node.id,
      },
    ),
  ];
}

/**
 * Texts of user schemas known to compile. compileUserSchema's ajv keeps every schema it compiles
 * and refuses a second schema with the same `$id`, so validating the same flow twice in one
 * process would fail on a schema with an `$id`; remembering what compiled avoids that (and keeps
 * repeated validations from growing ajv's cache). Bounded: cleared when full.
 */
const compiledSchemaTexts = new Set<string>();
const COMPILED_SCHEMA_TEXTS_MAX = 1000;

/** Why a user-written JSON Schema does not compile, or `undefined` when it does. */
function userSchemaProblem(schema: object): string | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    text = undefined;
  }
  if (text !== undefined && compiledSchemaTexts.has(text)) return undefined;
  try {
    compileUserSchema(schema);
  } catch (thrown) {
    return thrownMessage(thrown);
  }
  if (text !== undefined) {
    if (compiledSchemaTexts.size >= COMPILED_SCHEMA_TEXTS_MAX) compiledSchemaTexts.clear();
    compiledSchemaTexts.add(text);
  }
  return undefined;
}

/**
 * A tool node with the name the model calls it by (`config.name`, else its id, which must then be
 * a valid tool name: an error in `errors` otherwise) and whether it has an input schema.
 *
 * @example
 * ```ts
 * if (placed.role === NodeRole.Tool) tools.push(placeTool(placed, errors));
 * ```
 */
export function placeTool(placed: PlacedNode, errors: FlowDiagnostic[]): PlacedTool {
  const given = Object.hasOwn(placed.config, 'name') ? placed.config.name : undefined;
  const name = typeof given === 'string' ? given : placed.node.id;
  if (given === undefined && !TOOL_NAME_PATTERN.test(name)) {
    errors.push(
      flowDiagnostic(
        Severity.Error,
        ErrorCode.NODE_CONFIG_INVALID,
        `tool node '${placed.node.id}' takes its name from its id, which is not a valid tool name (1 to 64 letters, digits, '_' or '-')`,
        { hint: 'set config.name to a valid tool name, or rename the node', path: `${placed.path}.id`, nodeId: placed.node.id },
      ),
    );
  }
  const schema = Object.hasOwn(placed.config, 'inputSchema') ? placed.config.inputSchema : undefined;
  // A tool.module's schema is in its module, a subagent's is always `{ task }`, an MCP server's
  // tools bring theirs.
  const hasInputSchema =
    placed.node.type === NodeType.ToolModule ||
    placed.node.type === NodeType.ToolMcp ||
    placed.node.type === NodeType.AgentRef ||
    placed.node.type === NodeType.AgentA2a ||
    (typeof schema === 'object' && schema !== null && !Array.isArray(schema));
  return { ...placed, name, hasInputSchema };
}

/**
 * A `tool.mcp` node reaches its server one way: a `command` to start (stdio) or a `url` (Streamable
 * HTTP), never both and never neither; the stdio settings mean nothing to a URL, and the HTTP
 * settings nothing to a command. The schema cannot say it in a way its generated type can carry.
 */
function mcpTransportProblems(nodeId: string, config: Readonly<Record<string, unknown>>, configPath: string): FlowDiagnostic[] {
  const hasCommand = config.command !== undefined;
  const hasUrl = config.url !== undefined;
  const hint = 'give either "command" (with "args", "env", "cwd") to start a stdio server, or "url" (with "headers", "headersFromEnv") for a Streamable HTTP server';
  if (hasCommand === hasUrl) {
    const what = hasCommand ? 'has both "command" and "url"' : 'has neither "command" nor "url"';
    return [flowDiagnostic(Severity.Error, ErrorCode.NODE_CONFIG_INVALID, `tool.mcp node '${nodeId}' ${what}`, { hint, path: configPath, nodeId })];
  }
  const misplaced = (hasCommand ? ['headers', 'headersFromEnv'] : ['args', 'env', 'cwd']).filter((key) => config[key] !== undefined);
  return misplaced.map((key) =>
    flowDiagnostic(Severity.Error, ErrorCode.NODE_CONFIG_INVALID, `tool.mcp node '${nodeId}': "${key}" applies only to ${hasCommand ? 'a url' : 'a command'}`, {
      hint,
      path: `${configPath}.${key}`,
      nodeId,
    }),
  );
}

/**
 * A thrown value's message, never throwing itself.
 *
 * @example
 * ```ts
 * thrownMessage(new Error('boom')); // 'boom'
 * ```
 */
export function thrownMessage(thrown: unknown): string {
  try {
    return thrown instanceof Error ? thrown.message : describeValue(thrown);
  } catch {
    return 'unknown error';
  }
}
