import type { AgentCoreReactConfig, FlowDefinition, FlowEdge, FlowNode } from '../contracts/schema-types.js';
import { compileUserSchema, validators } from '../contracts/schemas.js';
import { ErrorCode } from '../errors.js';
import { type ConnectedToolRef, findVerifierNode, resolveAgentConfig, verifierNodeId } from './agentConfig.js';
import { type FlowDiagnostic, Severity, describeValue, explainSchemaErrors, flowDiagnostic } from './diagnostics.js';
import { isKnownProvider, unknownProvider } from '../actors/models/modelProviders.js';
import { checkConnection } from './edgeRules.js';
import { NODE_TYPES, NodeRole, NodeType, roleOf } from './nodeTypes.js';
import { parseSqlParameters, undeclaredParameters } from '../actors/tools/sqlParameters.js';

/** Re-exported so callers of {@link validateFlow} can type its diagnostics from this module alone. */
export type { FlowDiagnostic } from './diagnostics.js';

/** A tool connected to the agent core. */
export interface ResolvedTool {
  readonly node: FlowNode;
  /** The name the model calls it by: `config.name`, else the node id. */
  readonly name: string;
  /**
   * True when the tool has an input schema: `config.inputSchema` for `tool.http` and
   * `tool.postgres` (where it is required); always true for `tool.module`, whose module must
   * export one (checked when the module is loaded), and for `agent.ref` (`{ task }`).
   */
  readonly hasInputSchema: boolean;
}

/** A valid flow, resolved into the parts a run needs. */
export interface ResolvedFlow {
  /** The flow as given (not copied). */
  readonly definition: FlowDefinition;
  /** The agent core node and its normalised, validated config. */
  readonly agent: { readonly node: FlowNode; readonly config: AgentCoreReactConfig };
  /** The model connected to the agent core. */
  readonly model: FlowNode;
  /** The model.llm node the agent core verifies its final answers with (`verification.model`), when it names one. */
  readonly verifier?: FlowNode;
  /** Every tool connected to the agent core, in node order (the model may call those in `allowedTools`). */
  readonly tools: readonly ResolvedTool[];
  /** The memory connected to the agent core, if any. */
  readonly memory?: FlowNode;
  /** The trigger that starts a run: the `start` node, else the first trigger connected to the agent core. */
  readonly trigger?: FlowNode;
  /** The outputs connected from the agent core, in node order. */
  readonly outputs: readonly FlowNode[];
}

/**
 * The result of {@link validateFlow}: every error found (or the resolved flow), and the warnings.
 *
 * @example
 * ```ts
 * const validation: FlowValidation = validateFlow(JSON.parse(text));
 * if (!validation.ok) for (const error of validation.errors) console.error(error.code, error.message);
 * ```
 */
export type FlowValidation =
  | { readonly ok: true; readonly flow: ResolvedFlow; readonly warnings: FlowDiagnostic[] }
  | { readonly ok: false; readonly errors: FlowDiagnostic[]; readonly warnings: FlowDiagnostic[] };

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

const SCHEMA_HINT = 'see schemas/flow.schema.json for the flow format';

/** A node of the flow with where it is. */
interface PlacedNode {
  readonly node: FlowNode;
  readonly index: number;
  readonly path: string;
  /** Undefined for an unknown type (already reported). */
  readonly role: NodeRole | undefined;
  readonly config: Readonly<Record<string, unknown>>;
}

/** A tool node with its resolved name. */
interface PlacedTool extends PlacedNode {
  readonly name: string;
  readonly hasInputSchema: boolean;
}

/**
 * Validates a flow graph (already parsed from JSON) and resolves its parts. Collects every error
 * it can find, each with a code, a path, a message and a hint; never throws, whatever `value` is.
 *
 * Checks: the flow schema, node types, duplicate node and edge ids, edges to missing nodes, the
 * strict edge rules, `start`, exactly one agent core, capabilities connected to it, exactly one
 * model and at most one memory, each node's config, tool input schemas and names, `tool.postgres`
 * queries (parseable, every `:parameter` declared by the required inputSchema), and the agent
 * config (normalised: `reactive` → `react`, defaults, `allowedTools` from the connected tools).
 *
 * @example
 * ```ts
 * const result = validateFlow(JSON.parse(text));
 * if (!result.ok) console.error(formatDiagnostics(result.errors));
 * else console.log(result.flow.agent.config.allowedTools);
 * ```
 */
export function validateFlow(value: unknown): FlowValidation {
  try {
    return validateUnchecked(value);
  } catch (thrown) {
    // Last line of defence (e.g. a stack overflow on absurd input): bad input must never crash.
    return failed(
      [
        flowDiagnostic(Severity.Error, ErrorCode.FLOW_SCHEMA_MISMATCH, `the flow could not be validated: ${thrownMessage(thrown)}`, {
          hint: SCHEMA_HINT,
        }),
      ],
      [],
    );
  }
}

function validateUnchecked(value: unknown): FlowValidation {
  const schemaErrors = checkFlowSchema(value);
  if (schemaErrors.length > 0) return failed(schemaErrors, []);
  const flow = value as FlowDefinition;
  const errors: FlowDiagnostic[] = [];
  const warnings: FlowDiagnostic[] = [];

  // Nodes: types and ids.
  const nodes: PlacedNode[] = [];
  const byId = new Map<string, PlacedNode>();
  flow.nodes.forEach((node, index) => {
    const path = `nodes[${index}]`;
    const first = byId.get(node.id);
    if (first !== undefined) {
      errors.push(
        flowDiagnostic(Severity.Error, ErrorCode.DUPLICATE_NODE_ID, `${path} has the id '${node.id}', already used by ${first.path}`, {
          hint: 'give every node a unique id (edges refer to nodes by id)',
          path: `${path}.id`,
          nodeId: node.id,
        }),
      );
      return;
    }
    const role = roleOf(node.type);
    if (role === undefined) {
      errors.push(
        flowDiagnostic(Severity.Error, ErrorCode.UNKNOWN_NODE_TYPE, `node '${node.id}' has the unknown type '${node.type}'`, {
          hint: `use one of the known types: ${NODE_TYPES.join(', ')}`,
          path: `${path}.type`,
          nodeId: node.id,
        }),
      );
    }
    const placed: PlacedNode = { node, index, path, role, config: node.config ?? {} };
    byId.set(node.id, placed);
    nodes.push(placed);
  });

  // Edges: ids, ends and the strict rules. `linked` holds, for each node id, the nodes it shares
  // an edge with (either direction): a capability wired the wrong way is reported as a bad edge,
  // not a second time as unconnected.
  const linked = new Map<string, Set<string>>();
  const link = (a: string, b: string): void => {
    let set = linked.get(a);
    if (set === undefined) linked.set(a, (set = new Set()));
    set.add(b);
  };
  const edgeIndexById = new Map<string, number>();
  flow.edges.forEach((edge, index) => {
    const path = `edges[${edge.id}]`;
    const firstIndex = edgeIndexById.get(edge.id);
    if (firstIndex !== undefined) {
      errors.push(
        flowDiagnostic(Severity.Error, ErrorCode.DUPLICATE_EDGE_ID, `edges[${firstIndex}] and edges[${index}] both have the id '${edge.id}'`, {
          hint: 'give every edge a unique id',
          path,
          edgeId: edge.id,
        }),
      );
    } else {
      edgeIndexById.set(edge.id, index);
    }
    const source = byId.get(edge.source);
    const target = byId.get(edge.target);
    for (const [end, id, found] of [
      ['source', edge.source, source],
      ['target', edge.target, target],
    ] as const) {
      if (found !== undefined) continue;
      errors.push(
        flowDiagnostic(Severity.Error, ErrorCode.EDGE_NODE_MISSING, `edge '${edge.id}' has ${end} '${id}', but there is no node with that id`, {
          hint: `set the edge's ${end} to the id of an existing node, or add a node '${id}'`,
          path: `${path}.${end}`,
          edgeId: edge.id,
        }),
      );
    }
    if (source === undefined || target === undefined) return;
    link(source.node.id, target.node.id);
    link(target.node.id, source.node.id);
    if (source.role === undefined || target.role === undefined) return;
    errors.push(...checkEdge(edge, path, source, target));
  });

  // Start.
  if (flow.start !== undefined) {
    const start = byId.get(flow.start);
    if (start === undefined || start.node.type !== NodeType.TriggerInput) {
      const triggers = nodes.filter((n) => n.node.type === NodeType.TriggerInput).map((n) => `'${n.node.id}'`);
      const what = start === undefined ? 'is not the id of any node' : `is a ${start.node.type} node, not a ${NodeType.TriggerInput}`;
      errors.push(
        flowDiagnostic(Severity.Error, ErrorCode.START_NODE_MISSING, `start '${flow.start}' ${what}`, {
          hint:
            triggers.length > 0
              ? `set start to a ${NodeType.TriggerInput} node id (${triggers.join(', ')}), or remove start`
              : `add a ${NodeType.TriggerInput} node and set start to its id, or remove start`,
          path: 'start',
        }),
      );
    }
  }

  // Node configs, tool names and input schemas.
  const tools: PlacedTool[] = [];
  for (const placed of nodes) {
    if (placed.role === undefined || placed.node.type === NodeType.AgentCore) continue;
    errors.push(...checkNodeConfig(placed));
    if (placed.role === NodeRole.Tool) tools.push(placeTool(placed, errors));
  }
  const toolByName = new Map<string, PlacedTool>();
  for (const tool of tools) {
    const first = toolByName.get(tool.name);
    if (first === undefined) {
      toolByName.set(tool.name, tool);
      continue;
    }
    errors.push(
      flowDiagnostic(
        Severity.Error,
        ErrorCode.DUPLICATE_TOOL_NAME,
        `tools '${first.node.id}' (${first.path}) and '${tool.node.id}' (${tool.path}) are both named '${tool.name}'`,
        {
          hint: `tool names must be unique: set a different config.name on one of them (a tool's name defaults to its node id)`,
          path: tool.path,
          nodeId: tool.node.id,
        },
      ),
    );
  }

  // The agent core and what is connected to it.
  const cores = nodes.filter((n) => n.role === NodeRole.Core);
  if (cores.length === 0) {
    errors.push(
      flowDiagnostic(Severity.Error, ErrorCode.NO_AGENT_CORE, `the flow has no ${NodeType.AgentCore} node`, {
        hint: `add one ${NodeType.AgentCore} node and connect the model, tools, memory and outputs to it`,
        path: 'nodes',
      }),
    );
  } else if (cores.length > 1) {
    errors.push(
      flowDiagnostic(
        Severity.Error,
        ErrorCode.MULTIPLE_AGENT_CORES,
        `the flow has ${cores.length} ${NodeType.AgentCore} nodes (${cores.map((c) => `'${c.node.id}'`).join(', ')}); at most 1 is allowed`,
        { hint: `keep one ${NodeType.AgentCore} node per flow and remove the others`, path: 'nodes' },
      ),
    );
  }
  const isLinked = (a: PlacedNode, b: PlacedNode): boolean => linked.get(a.node.id)?.has(b.node.id) === true;

  // A verifier model node is named by the core's config, not connected to it.
  const verifierIds = new Set(cores.map((core) => verifierNodeId(core.config)).filter((id) => id !== undefined));
  if (cores.length > 0) {
    const coreName = cores.length === 1 && cores[0] !== undefined ? `'${cores[0].node.id}'` : '';
    for (const placed of nodes) {
      if (placed.role !== NodeRole.Model && placed.role !== NodeRole.Tool && placed.role !== NodeRole.Memory) continue;
      if (cores.some((core) => isLinked(core, placed))) continue;
      if (placed.role === NodeRole.Model && verifierIds.has(placed.node.id)) continue;
      errors.push(
        flowDiagnostic(
          Severity.Error,
          ErrorCode.CAPABILITY_NOT_CONNECTED,
          `capability '${placed.node.id}' (${placed.node.type}) is not connected to the ${NodeType.AgentCore}${coreName === '' ? '' : ` ${coreName}`}`,
          {
            hint: `add an edge ${cores[0]?.node.id ?? NodeType.AgentCore} → ${placed.node.id}, or remove the node (edges mean "this capability is available to the agent")`,
            path: placed.path,
            nodeId: placed.node.id,
          },
        ),
      );
    }
  }

  let resolved: ResolvedFlow | undefined;
  for (const core of cores) {
    const connected = (role: NodeRole): PlacedNode[] => nodes.filter((n) => n.role === role && isLinked(core, n));
    const models = connected(NodeRole.Model);
    const memories = connected(NodeRole.Memory);
    const coreTools = tools.filter((tool) => isLinked(core, tool));
    const id = core.node.id;
    if (models.length === 0) {
      errors.push(
        flowDiagnostic(Severity.Error, ErrorCode.NO_MODEL, `${NodeType.AgentCore} '${id}' has no model connected`, {
          hint: `add a ${NodeType.ModelLlm} node and an edge ${id} → that node`,
          path: core.path,
          nodeId: id,
        }),
      );
    } else if (models.length > 1) {
      errors.push(
        flowDiagnostic(
          Severity.Error,
          ErrorCode.MULTIPLE_MODELS,
          `${NodeType.AgentCore} '${id}' has ${models.length} models connected (${models.map((m) => `'${m.node.id}'`).join(', ')}); exactly 1 is allowed`,
          { hint: 'keep one edge to a model.llm node and remove the others', path: core.path, nodeId: id },
        ),
      );
    }
    if (memories.length > 1) {
      errors.push(
        flowDiagnostic(
          Severity.Error,
          ErrorCode.MULTIPLE_MEMORIES,
          `${NodeType.AgentCore} '${id}' has ${memories.length} memories connected (${memories.map((m) => `'${m.node.id}'`).join(', ')}); at most 1 is allowed`,
          { hint: 'keep one memory.kv node connected and remove the other edges', path: core.path, nodeId: id },
        ),
      );
    }
    for (const tool of coreTools) {
      // tool.postgres requires one: its absence is already a NODE_CONFIG_INVALID error.
      if (tool.hasInputSchema || tool.node.type === NodeType.ToolPostgres) continue;
      warnings.push(
        flowDiagnostic(
          Severity.Warning,
          ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA,
          `tool '${tool.name}' (${tool.node.type}) has no inputSchema: the model's input for it is not checked and the model is not told what to send`,
          { hint: `add config.inputSchema (a JSON Schema of the tool's input) to node '${tool.node.id}'`, path: `${tool.path}.config`, nodeId: tool.node.id },
        ),
      );
    }
    const refs: ConnectedToolRef[] = coreTools.map((tool) => ({ name: tool.name, nodeId: tool.node.id, path: tool.path }));
    const agent = resolveAgentConfig(core.config, { nodeId: id, path: core.path }, refs);
    errors.push(...agent.errors);
    warnings.push(...agent.warnings);

    const verifierId = verifierNodeId(core.config);
    const verifier = verifierId === undefined ? undefined : findVerifierNode(verifierId, (nodeId) => byId.get(nodeId)?.node, { nodeId: id, path: core.path }, nodes.filter((n) => n.node.type === NodeType.ModelLlm).map((n) => n.node.id));
    if (verifier !== undefined && 'error' in verifier) errors.push(verifier.error);

    const model = models[0];
    if (cores.length === 1 && agent.config !== undefined && model !== undefined) {
      const triggers = connected(NodeRole.Input);
      const start = flow.start === undefined ? undefined : byId.get(flow.start);
      const trigger = start ?? triggers[0];
      const memory = memories[0];
      resolved = {
        definition: flow,
        agent: { node: core.node, config: agent.config },
        model: model.node,
        ...(verifier !== undefined && 'node' in verifier && { verifier: verifier.node }),
        tools: coreTools.map((tool) => ({ node: tool.node, name: tool.name, hasInputSchema: tool.hasInputSchema })),
        ...(memory === undefined ? {} : { memory: memory.node }),
        ...(trigger === undefined ? {} : { trigger: trigger.node }),
        outputs: connected(NodeRole.Output).map((n) => n.node),
      };
    }
  }

  if (errors.length > 0 || resolved === undefined) return failed(errors, warnings);
  return { ok: true, flow: resolved, warnings };
}

function failed(errors: FlowDiagnostic[], warnings: FlowDiagnostic[]): FlowValidation {
  return { ok: false, errors, warnings };
}

/**
 * Checks the flow against `flow.schema.json`. To report every broken node and edge at once (ajv
 * stops at the first error), the frame and each node and edge are checked on their own.
 */
function checkFlowSchema(value: unknown): FlowDiagnostic[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [
      flowDiagnostic(
        Severity.Error,
        ErrorCode.FLOW_SCHEMA_MISMATCH,
        `a flow must be a JSON object with "nodes" and "edges" arrays, not ${describeValue(value)}`,
        { hint: SCHEMA_HINT },
      ),
    ];
  }
  if (validators.flow(value)) return [];
  const whole = validators.flow.errors;
  const record = value as Record<string, unknown>;
  const nodes = Object.hasOwn(record, 'nodes') ? record.nodes : undefined;
  const edges = Object.hasOwn(record, 'edges') ? record.edges : undefined;
  if (!Array.isArray(nodes) || !Array.isArray(edges)) return [schemaMismatch('', whole)];

  const found: FlowDiagnostic[] = [];
  if (!validators.flow({ ...record, nodes: [], edges: [] })) found.push(schemaMismatch('', validators.flow.errors));
  nodes.forEach((node: unknown, index) => {
    if (!validators.flow({ nodes: [node], edges: [] })) {
      found.push(schemaMismatch(`nodes[${index}]`, rebase(validators.flow.errors, '/nodes/0'), idOf(node), undefined));
    }
  });
  edges.forEach((edge: unknown, index) => {
    if (!validators.flow({ nodes: [], edges: [edge] })) {
      const id = idOf(edge);
      found.push(schemaMismatch(`edges[${id ?? index}]`, rebase(validators.flow.errors, '/edges/0'), undefined, id));
    }
  });
  // Sparse arrays or other oddities the item checks cannot see: fall back to the whole-flow error.
  return found.length > 0 ? found : [schemaMismatch('', whole)];
}

function schemaMismatch(
  base: string,
  errors: Parameters<typeof explainSchemaErrors>[1],
  nodeId?: string,
  edgeId?: string,
): FlowDiagnostic {
  const { message, path } = explainSchemaErrors(base, errors);
  return flowDiagnostic(Severity.Error, ErrorCode.FLOW_SCHEMA_MISMATCH, `the flow does not match its schema: ${message}`, {
    hint: SCHEMA_HINT,
    path,
    nodeId,
    edgeId,
  });
}

/** Strips the pointer prefix of a single-item check (e.g. `/nodes/0`) from ajv errors. */
function rebase(
  errors: Parameters<typeof explainSchemaErrors>[1],
  prefix: string,
): Parameters<typeof explainSchemaErrors>[1] {
  return (errors ?? []).map((error) => ({
    ...error,
    instancePath: error.instancePath.startsWith(prefix) ? error.instancePath.slice(prefix.length) : error.instancePath,
  }));
}

function idOf(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null || !Object.hasOwn(item, 'id')) return undefined;
  const id = (item as { id: unknown }).id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

function checkEdge(edge: FlowEdge, path: string, source: PlacedNode, target: PlacedNode): FlowDiagnostic[] {
  const check = checkConnection(source.node.type, target.node.type, edge.kind);
  if (check.ok) return [];
  const kindMismatch = check.code === ErrorCode.EDGE_KIND_MISMATCH;
  return [
    flowDiagnostic(Severity.Error, check.code, `edge '${edge.id}' (${source.node.id} → ${target.node.id}): ${check.message}`, {
      hint: kindMismatch
        ? 'fix or remove the edge kind (it is inferred from the node types when absent)'
        : 'the agent.core is the hub: inputs connect to it; it connects to one model, its tools, at most one memory (either way) and outputs',
      path: kindMismatch ? `${path}.kind` : path,
      edgeId: edge.id,
    }),
  ];
}

function checkNodeConfig(placed: PlacedNode): FlowDiagnostic[] {
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

function placeTool(placed: PlacedNode, errors: FlowDiagnostic[]): PlacedTool {
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

function thrownMessage(thrown: unknown): string {
  try {
    return thrown instanceof Error ? thrown.message : describeValue(thrown);
  } catch {
    return 'unknown error';
  }
}
