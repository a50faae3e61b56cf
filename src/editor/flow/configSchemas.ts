/**
 * Node config validation in the browser, against the same JSON Schemas the runtime uses
 * (`schemas/flow.schema.json`'s config definitions and `schemas/agent-core.react.schema.json`),
 * with ajv's validators compiled at build time (configValidatorsPlugin.ts), so that no
 * `new Function` runs in the browser and a strict Content Security Policy holds. The forms read
 * the JSON files themselves; the rules (and `normalizeAgentConfig`'s defaults) are the same.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import compiledValidators from 'virtual:redflow/config-validators';
import agentCoreSchema from '../../../schemas/agent-core.react.schema.json';
import flowSchema from '../../../schemas/flow.schema.json';
import { NodeType, type NodeType as NodeTypeName } from '../../flows/nodeTypes.js';
import type { ConfigIssue } from './configIssue.js';
import { checkStopConditionValues } from './stopConditions.js';

/** A JSON Schema as the forms read it. */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly default?: unknown;
  readonly description?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly pattern?: string;
  readonly items?: JsonSchema;
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly $ref?: string;
}

/** The definition in `flow.schema.json` of each node type's config (the agent core has its own schema). */
const CONFIG_DEFINITION: { readonly [T in Exclude<NodeTypeName, typeof NodeType.AgentCore>]: string } = {
  [NodeType.TriggerInput]: 'TriggerInputConfig',
  [NodeType.ModelLlm]: 'ModelLlmConfig',
  [NodeType.MemoryKv]: 'MemoryKvConfig',
  [NodeType.ToolHttp]: 'ToolHttpConfig',
  [NodeType.ToolModule]: 'ToolModuleConfig',
  [NodeType.ToolPostgres]: 'ToolPostgresConfig',
  [NodeType.ToolMcp]: 'ToolMcpConfig',
  [NodeType.ToolClient]: 'ToolClientConfig',
  [NodeType.ToolFlow]: 'ToolFlowConfig',
  [NodeType.AgentRef]: 'AgentRefConfig',
  [NodeType.AgentA2a]: 'AgentA2aConfig',
  [NodeType.ResponseChat]: 'ResponseChatConfig',
  [NodeType.ResponseEnd]: 'ResponseEndConfig',
};

const flowDefinitions = (flowSchema as { definitions: Record<string, JsonSchema> }).definitions;

/** Follows a local `$ref` of `flow.schema.json` (`#/definitions/...`). */
function resolveRef(schema: JsonSchema): JsonSchema {
  if (schema.$ref === undefined) return schema;
  let target: unknown = flowSchema;
  for (const part of schema.$ref.replace(/^#\//, '').split('/')) {
    target = (target as Record<string, unknown> | undefined)?.[part];
  }
  return (target as JsonSchema | undefined) ?? {};
}

/**
 * The JSON Schema of a node type's config, with its properties' `$ref`s resolved: what the config
 * forms are generated from.
 */
export function configSchemaOf(type: NodeTypeName): JsonSchema {
  const schema: JsonSchema =
    type === NodeType.AgentCore ? (agentCoreSchema as JsonSchema) : (flowDefinitions[CONFIG_DEFINITION[type]] ?? {});
  const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, value]) => [key, resolveRef(value)]));
  return { ...schema, properties };
}

function validatorOf(type: NodeTypeName): ValidateFunction {
  const name = type === NodeType.AgentCore ? 'AgentCoreConfig' : CONFIG_DEFINITION[type];
  const validate = compiledValidators[name];
  if (!validate) throw new Error(`no compiled validator ${name}: is it a definition of schemas/flow.schema.json?`);
  return validate;
}

/** What the agent core's config is checked as: `normalizeAgentConfig`'s defaults (src/flows/agentConfig.ts). */
export function normalizedAgentConfig(config: Readonly<Record<string, unknown>>, connectedToolNames: readonly string[]): Record<string, unknown> {
  const normalized: Record<string, unknown> = { ...config };
  if (normalized.strategy === 'reactive') normalized.strategy = 'react';
  normalized.maxIterations ??= 5;
  normalized.stopConditions ??= [];
  normalized.debug ??= false;
  if (!Object.hasOwn(config, 'allowedTools')) normalized.allowedTools = [...new Set(connectedToolNames)];
  return normalized;
}

/**
 * Checks a node's config against its schema. For the agent core, a missing `allowedTools` means
 * every connected tool (as when a flow is loaded), so `connectedToolNames` is needed.
 *
 * @example
 * ```ts
 * validateNodeConfig('tool.module', {}) // [{ field: 'module', message: "must have required property 'module'" }]
 * ```
 */
export function validateNodeConfig(
  type: NodeTypeName,
  config: Readonly<Record<string, unknown>>,
  connectedToolNames: readonly string[] = [],
): ConfigIssue[] {
  const isAgent = type === NodeType.AgentCore;
  const checked = isAgent ? normalizedAgentConfig(config, connectedToolNames) : config;
  const validate = validatorOf(type);
  const issues = validate(checked) ? [] : (validate.errors ?? []).map(toIssue);
  // The schema leaves stop condition values untyped; flow validation checks their ranges.
  if (isAgent) issues.push(...checkStopConditionValues(checked));
  // The agent core runs without tools (an agent definition may have none); a flow's agent needs one (NO_TOOLS).
  if (isAgent && Array.isArray(checked.allowedTools) && checked.allowedTools.length === 0) {
    issues.push({ field: 'allowedTools', message: "must list at least one tool: a flow's agent acts through its tools" });
  }
  return issues;
}

function toIssue(error: ErrorObject): ConfigIssue {
  const segments = error.instancePath.split('/').filter(Boolean);
  const params = error.params as Record<string, unknown>;
  let field = segments[0];
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'required') {
    const missing = String(params.missingProperty);
    // At the top level the field is the missing property; inside a field, say which one is missing.
    message = field === undefined ? 'is required' : `'${missing}' is required`;
    field ??= missing;
  } else if (error.keyword === 'additionalProperties') {
    message = `unknown property '${String(params.additionalProperty)}'`;
  } else if (error.keyword === 'enum') {
    message = `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  } else if (error.keyword === 'const') {
    message = `must be ${JSON.stringify(params.allowedValue)}`;
  }
  const path = segments.slice(1);
  if (field === undefined) return { message };
  if (path.length === 0) return { field, message };
  return { field, message: `${path.join('.')}: ${message}`, path, detail: message };
}
