import type { FlowDefinition, FlowEdge } from '../contracts/schema-types.js';
import { validators } from '../contracts/schemas.js';
import { ErrorCode } from '../errors.js';
import { type ConnectedToolRef, findVerifierNode, resolveAgentConfig, verifierNodeId } from './agentConfig.js';
import { type FlowDiagnostic, Severity, describeValue, explainSchemaErrors, flowDiagnostic } from './diagnostics.js';
import { checkConnection } from './edgeRules.js';
import { NODE_TYPES, NodeRole, NodeType, roleOf } from './nodeTypes.js';
import type { FlowValidation, ResolvedFlow } from './flowValidation.js';
import { checkNodeConfig, placeTool, thrownMessage, type PlacedNode, type PlacedTool } from './nodeRules.js';

/** Re-exported so callers of {@link validateFlow} can type its diagnostics from this module alone. */
export type { FlowDiagnostic } from './diagnostics.js';
export type { FlowValidation, ResolvedFlow, ResolvedTool } from './flowValidation.js';
export { TOOL_NAME_PATTERN } from './nodeRules.js';

const SCHEMA_HINT = 'see schemas/flow.schema.json for the flow format';

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
