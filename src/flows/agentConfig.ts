import type { AgentCoreReactConfig, FlowNode } from '../contracts/schema-types.js';
import { compileOutputSchema, validators } from '../contracts/schemas.js';
import { ErrorCode } from '../errors.js';
import { type FlowDiagnostic, Severity, explainSchemaErrors, flowDiagnostic } from './diagnostics.js';
import { stopConditionValueProblems } from './stopConditionValues.js';
import { NodeType } from './nodeTypes.js';

/** The only strategy: ReAct (reason, then act), one action per iteration. */
export const REACT_STRATEGY = 'react';

/** Other spellings of the react strategy, accepted in flow files and normalised to {@link REACT_STRATEGY}. */
export const STRATEGY_SYNONYMS: readonly string[] = Object.freeze(['reactive']);

/** Defaults of the agent config (`agent-core.react.schema.json`). */
export const AGENT_CONFIG_DEFAULTS = Object.freeze({
  maxIterations: 5,
  debug: false,
});


/** A tool connected to an agent core, as the agent config check needs it. */
export interface ConnectedToolRef {
  readonly name: string;
  readonly nodeId: string;
  /** Flow path of the tool node, e.g. `nodes[4]`. */
  readonly path: string;
}

/** Where the agent core node is: its id and flow path (e.g. `nodes[1]`). */
export interface AgentNodeRef {
  readonly nodeId: string;
  readonly path: string;
}

/** The outcome of {@link resolveAgentConfig}: the normalised config when it is valid, and what was found. */
export interface AgentConfigResolution {
  readonly config: AgentCoreReactConfig | undefined;
  readonly errors: FlowDiagnostic[];
  readonly warnings: FlowDiagnostic[];
}

const AGENT_CONFIG_HINT =
  "agent.core config: strategy 'react' (or 'reactive'), maxIterations 1..20, allowedTools (tool names), stopConditions, debug, instructions, requiresApproval (tool names), waitTimeoutMs, reasoning ('optional' or 'explicit'), outputSchema (a JSON Schema), outputRepair, onInvalidAnswer ({ repair: 0..10 }), budget ({ maxTokens, maxCost, prices }), verification ('off', 'self' or { model, rubric, criteria, maxFailures }); see schemas/agent-core.react.schema.json";

/**
 * Normalises an agent core's raw config: strategy `reactive` → `react`; defaults
 * `maxIterations` 5, `stopConditions` [], `debug` false; a missing `allowedTools` becomes the names
 * of the tools connected to the agent (in node order). Does not validate; returns a new object.
 *
 * @example
 * ```ts
 * normalizeAgentConfig({ strategy: 'reactive' }, ['http1'])
 * // { strategy: 'react', maxIterations: 5, stopConditions: [], debug: false, allowedTools: ['http1'] }
 * ```
 */
export function normalizeAgentConfig(
  raw: Readonly<Record<string, unknown>>,
  connectedToolNames: readonly string[],
): Record<string, unknown> {
  const config: Record<string, unknown> = { ...raw };
  if (typeof config.strategy === 'string' && STRATEGY_SYNONYMS.includes(config.strategy)) {
    config.strategy = REACT_STRATEGY;
  }
  if (!Object.hasOwn(config, 'maxIterations')) config.maxIterations = AGENT_CONFIG_DEFAULTS.maxIterations;
  if (!Object.hasOwn(config, 'stopConditions')) config.stopConditions = [];
  if (!Object.hasOwn(config, 'debug')) config.debug = AGENT_CONFIG_DEFAULTS.debug;
  if (!Object.hasOwn(config, 'allowedTools')) config.allowedTools = [...new Set(connectedToolNames)];
  return config;
}

/**
 * Normalises and checks an agent core's config against the tools connected to it: the schema
 * (`NODE_CONFIG_INVALID`), stop condition values, `allowedTools` entries that are not connected
 * (`ALLOWED_TOOL_NOT_CONNECTED`), no tools at all (`NO_TOOLS`), and, as warnings, connected tools
 * left out of an explicit `allowedTools` (`TOOL_NOT_IN_ALLOWED_TOOLS`).
 *
 * @example
 * ```ts
 * const { config, errors } = resolveAgentConfig(
 *   { strategy: 'reactive' },
 *   { nodeId: 'agent1', path: 'nodes[1]' },
 *   [{ name: 'http1', nodeId: 'http1', path: 'nodes[4]' }],
 * );
 * config?.allowedTools // ['http1']
 * ```
 */
export function resolveAgentConfig(
  raw: Readonly<Record<string, unknown>>,
  agent: AgentNodeRef,
  connectedTools: readonly ConnectedToolRef[],
): AgentConfigResolution {
  const errors: FlowDiagnostic[] = [];
  const warnings: FlowDiagnostic[] = [];
  const configPath = `${agent.path}.config`;
  const connectedNames = connectedTools.map((tool) => tool.name);
  const config = normalizeAgentConfig(raw, connectedNames);
  const explicitAllowed = Object.hasOwn(raw, 'allowedTools') ? raw.allowedTools : undefined;

  // A flow's agent acts through its tool nodes: one without any is a flow not finished. (The agent
  // core itself runs with none, as an agent definition without tools does.)
  const listsNone = Array.isArray(explicitAllowed) && explicitAllowed.length === 0;
  if (connectedTools.length === 0 && (explicitAllowed === undefined || listsNone)) {
    errors.push(
      flowDiagnostic(Severity.Error, ErrorCode.NO_TOOLS, `agent.core '${agent.nodeId}' has no tools: no tool node is connected to it and it lists no allowedTools`, {
        hint: `add a tool node (tool.http, tool.module or tool.postgres) and an edge ${agent.nodeId} → that tool`,
        path: agent.path,
        nodeId: agent.nodeId,
      }),
    );
  } else if (listsNone) {
    errors.push(
      flowDiagnostic(Severity.Error, ErrorCode.NO_TOOLS, `agent.core '${agent.nodeId}' has no tools: its allowedTools is empty, so the model can call none of its connected tools`, {
        hint: 'list the tools the model may call in allowedTools, or leave allowedTools out (it is then every connected tool)',
        path: `${configPath}.allowedTools`,
        nodeId: agent.nodeId,
      }),
    );
  }

  if (!validators.agentCore(config)) {
    const { message, path } = explainSchemaErrors(configPath, validators.agentCore.errors);
    errors.push(
      flowDiagnostic(Severity.Error, ErrorCode.NODE_CONFIG_INVALID, `agent.core '${agent.nodeId}' config is invalid: ${message}`, {
        hint: AGENT_CONFIG_HINT,
        path,
        nodeId: agent.nodeId,
      }),
    );
  }

  errors.push(...checkStopConditions(config, agent, configPath));
  errors.push(...checkApprovals(config, agent, configPath));
  errors.push(...checkOutputSchema(config, agent, configPath));

  if (Array.isArray(explicitAllowed)) {
    explicitAllowed.forEach((entry: unknown, index) => {
      if (typeof entry !== 'string' || entry === '' || connectedNames.includes(entry)) return;
      errors.push(
        flowDiagnostic(
          Severity.Error,
          ErrorCode.ALLOWED_TOOL_NOT_CONNECTED,
          `allowedTools of agent.core '${agent.nodeId}' lists '${entry}', but no tool named '${entry}' is connected to it (connected tools: ${listOrNone(connectedNames)})`,
          {
            hint: `connect a tool named '${entry}' (edge ${agent.nodeId} → the tool node) or remove '${entry}' from allowedTools`,
            path: `${configPath}.allowedTools[${index}]`,
            nodeId: agent.nodeId,
          },
        ),
      );
    });
    for (const tool of connectedTools) {
      if (explicitAllowed.includes(tool.name)) continue;
      warnings.push(
        flowDiagnostic(
          Severity.Warning,
          ErrorCode.TOOL_NOT_IN_ALLOWED_TOOLS,
          `tool '${tool.name}' is connected to agent.core '${agent.nodeId}' but is not in its allowedTools, so the model can never call it`,
          {
            hint: `add '${tool.name}' to allowedTools, or remove the edge ${agent.nodeId} → ${tool.nodeId}`,
            path: tool.path,
            nodeId: tool.nodeId,
          },
        ),
      );
    }
  }

  return { config: errors.length === 0 ? (config as unknown as AgentCoreReactConfig) : undefined, errors, warnings };
}

function checkStopConditions(
  config: Readonly<Record<string, unknown>>,
  agent: AgentNodeRef,
  configPath: string,
): FlowDiagnostic[] {
  return stopConditionValueProblems(config).map(({ index, problem }) =>
    flowDiagnostic(Severity.Error, ErrorCode.NODE_CONFIG_INVALID, `agent.core '${agent.nodeId}' stop condition ${index + 1} is invalid: ${problem}`, {
      hint: `set stopConditions[${index}].value, e.g. { "type": "confidence_threshold", "value": 0.8 } or { "type": "iteration_limit", "value": 3 }`,
      path: `${configPath}.stopConditions[${index}].value`,
      nodeId: agent.nodeId,
    }),
  );
}

/** The outputSchema must be a JSON Schema ajv can compile: a run would otherwise fail when it starts. */
function checkOutputSchema(config: Readonly<Record<string, unknown>>, agent: AgentNodeRef, configPath: string): FlowDiagnostic[] {
  const { outputSchema } = config;
  if (typeof outputSchema !== 'object' || outputSchema === null || Array.isArray(outputSchema)) return [];
  try {
    compileOutputSchema(outputSchema);
    return [];
  } catch (error) {
    return [
      flowDiagnostic(Severity.Error, ErrorCode.NODE_CONFIG_INVALID, `agent.core '${agent.nodeId}' outputSchema is not a valid JSON Schema: ${(error as Error).message}`, {
        hint: 'write outputSchema as a JSON Schema (draft-07), e.g. { "type": "object", "required": ["summary"], "properties": { "summary": { "type": "string" } } }',
        path: `${configPath}.outputSchema`,
        nodeId: agent.nodeId,
      }),
    ];
  }
}

/** Every tool of `requiresApproval` must be one the model may call, or the setting would do nothing. */
function checkApprovals(config: Readonly<Record<string, unknown>>, agent: AgentNodeRef, configPath: string): FlowDiagnostic[] {
  const { requiresApproval, allowedTools } = config;
  if (!Array.isArray(requiresApproval) || !Array.isArray(allowedTools)) return [];
  return requiresApproval.flatMap((entry: unknown, index) =>
    typeof entry !== 'string' || entry === '' || allowedTools.includes(entry)
      ? []
      : [
          flowDiagnostic(
            Severity.Error,
            ErrorCode.APPROVAL_TOOL_NOT_ALLOWED,
            `requiresApproval of agent.core '${agent.nodeId}' lists '${entry}', which is not in its allowedTools (${listOrNone(allowedTools.filter((name): name is string => typeof name === 'string'))}): the model can never call it`,
            {
              hint: `remove '${entry}' from requiresApproval, or connect and allow a tool named '${entry}'`,
              path: `${configPath}.requiresApproval[${index}]`,
              nodeId: agent.nodeId,
            },
          ),
        ],
  );
}

function listOrNone(names: readonly string[]): string {
  return names.length === 0 ? 'none' : names.join(', ');
}

// The verifier model a flow's agent core names by node id (`verification.model`, docs/verification.md):
// a model.llm node left unconnected, since the core connects to its own model only.

/**
 * The node id an agent core's raw config names as its verifier, when it names one (inline model
 * settings name none).
 *
 * @example
 * ```ts
 * verifierNodeId({ verification: { model: 'judge' } }) // 'judge'
 * ```
 */
export function verifierNodeId(config: unknown): string | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const verification = (config as { verification?: unknown }).verification;
  if (typeof verification !== 'object' || verification === null) return undefined;
  const model = (verification as { model?: unknown }).model;
  return typeof model === 'string' && model !== '' ? model : undefined;
}

/**
 * The verifier node an agent core names, or the `VERIFIER_MODEL_NOT_FOUND` error when no
 * model.llm node of the flow has that id.
 *
 * @example
 * ```ts
 * const found = findVerifierNode('judge', (id) => nodesById.get(id), { nodeId: 'agent', path: 'nodes[1]' });
 * if ('error' in found) errors.push(found.error);
 * ```
 */
export function findVerifierNode(
  id: string,
  nodeOf: (id: string) => FlowNode | undefined,
  core: { readonly nodeId: string; readonly path: string },
  modelIds: readonly string[],
): { readonly node: FlowNode } | { readonly error: FlowDiagnostic } {
  const node = nodeOf(id);
  if (node?.type === NodeType.ModelLlm) return { node };
  const what = node === undefined ? 'there is no node with that id' : `'${id}' is a ${node.type} node, not a ${NodeType.ModelLlm}`;
  const models = modelIds.map((model) => `'${model}'`).join(', ');
  return {
    error: flowDiagnostic(Severity.Error, ErrorCode.VERIFIER_MODEL_NOT_FOUND, `${NodeType.AgentCore} '${core.nodeId}' verifies with the model '${id}', but ${what}`, {
      hint: `add a ${NodeType.ModelLlm} node with the id '${id}' (it needs no edge), set verification.model to ${models === '' ? 'the id of a model.llm node' : `one of ${models}`}, or give the model's settings inline`,
      path: `${core.path}.config.verification.model`,
      nodeId: core.nodeId,
    }),
  };
}
