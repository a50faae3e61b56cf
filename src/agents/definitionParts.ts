import type { AgentCoreReactConfig, HistoryMessage, ToolSpec } from '../contracts/schema-types.js';
import type { AgentSchema } from './schemaCheck.js';
import { requireJsonSchema } from './schemaToJson.js';
import { renderTemplate } from './template.js';

// Parts of a definition kept apart from agentDefinition.ts and agentExecutor.ts (both large): the
// checks its parts share, and the agent config it runs with.

/** The turns of a definition without `runConfig.maxTurns`: an agent core's default. */
export const DEFAULT_MAX_TURNS = 5;
/** The agent core's ceiling on iterations. */
export const MAX_TURNS = 20;

/** The agent core's ceiling on `waitTimeoutMs`: 30 days. */
const MAX_WAIT_TIMEOUT_MS = 2_592_000_000;

/** One thing wrong with a definition: where, what, and how to fix it when that is not plain from the rest. */
export interface Problem {
  readonly path: string;
  readonly message: string;
  readonly hint?: string;
}

/** True for a plain object (not null, not an array): `isObject({})` is true. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as a problem's message names it: `describe([])` is 'an array', `describe('x')` is '"x"'. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) : typeof value;
}

/** A definition's `runConfig`: each limit in its range, and a `verification` the agent core takes. */
export function checkRun(config: unknown, problems: Problem[]): void {
  if (config === undefined) return;
  if (!isObject(config)) {
    problems.push({ path: 'runConfig', message: `must be an object, got ${describe(config)}` });
    return;
  }
  const { maxTurns, timeoutMs, waitTimeoutMs, repairInvalidAnswers: repairs } = config;
  if (maxTurns !== undefined && !(Number.isInteger(maxTurns) && (maxTurns as number) >= 1 && (maxTurns as number) <= MAX_TURNS)) {
    problems.push({ path: 'runConfig.maxTurns', message: `must be an integer from 1 to ${MAX_TURNS}, got ${describe(maxTurns)}${typeof maxTurns === 'number' ? ` ${maxTurns}` : ''}` });
  }
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && (timeoutMs as number) > 0)) {
    problems.push({ path: 'runConfig.timeoutMs', message: `must be a positive integer (milliseconds), got ${describe(timeoutMs)}` });
  }
  if (waitTimeoutMs !== undefined && !(Number.isInteger(waitTimeoutMs) && (waitTimeoutMs as number) > 0 && (waitTimeoutMs as number) <= MAX_WAIT_TIMEOUT_MS)) {
    problems.push({ path: 'runConfig.waitTimeoutMs', message: `must be a positive integer of at most ${MAX_WAIT_TIMEOUT_MS} (30 days, in milliseconds), got ${describe(waitTimeoutMs)}` });
  }
  if (repairs !== undefined && !(Number.isInteger(repairs) && (repairs as number) >= 0 && (repairs as number) <= 10)) {
    problems.push({ path: 'runConfig.repairInvalidAnswers', message: `must be an integer from 0 to 10, got ${describe(repairs)}` });
  }
  checkVerification(config.verification, problems);
}

/** `runConfig.verification`: "off", "self", or { rubric?, criteria?, maxFailures? } (the agent core's `verification`). */
function checkVerification(value: unknown, problems: Problem[]): void {
  if (value === undefined || value === 'off' || value === 'self') return;
  const path = 'runConfig.verification';
  if (!isObject(value)) {
    problems.push({ path, message: `must be "off", "self" or { rubric?, criteria?, maxFailures? }, got ${describe(value)}` });
    return;
  }
  const known: ReadonlySet<string> = new Set(['model', 'rubric', 'criteria', 'maxFailures'] satisfies (keyof Exclude<NonNullable<AgentCoreReactConfig['verification']>, string>)[]);
  for (const key of Object.keys(value)) if (!known.has(key)) problems.push({ path: `${path}.${key}`, message: 'is not a verification setting (model, rubric, criteria, maxFailures)' });
  const { model, rubric, criteria, maxFailures } = value;
  // A definition has no model nodes to name: its verifier is given by its settings.
  if (model !== undefined && !(isObject(model) && typeof model.provider === 'string')) {
    problems.push({ path: `${path}.model`, message: `must be the verifier's model settings ({ provider, model, … }), got ${describe(model)}` });
  }
  if (rubric !== undefined && typeof rubric !== 'string') problems.push({ path: `${path}.rubric`, message: `must be a string, got ${describe(rubric)}` });
  if (criteria !== undefined && !(Array.isArray(criteria) && criteria.every((item) => typeof item === 'string' && item !== ''))) {
    problems.push({ path: `${path}.criteria`, message: 'must be an array of non-empty strings' });
  }
  if (maxFailures !== undefined && !(Number.isInteger(maxFailures) && (maxFailures as number) >= 1 && (maxFailures as number) <= 10)) {
    problems.push({ path: `${path}.maxFailures`, message: `must be an integer from 1 to 10, got ${describe(maxFailures)}` });
  }
}

/**
 * What {@link agentConfigOf} reads of a definition (an `AgentDefinition`), by its shape: this file
 * is imported by agentDefinition.ts, so it imports nothing of it.
 */
interface ConfiguredDefinition {
  readonly promptConfig: {
    readonly systemPrompt: string;
    readonly query?: string;
    readonly initialMessages?: readonly { readonly role: HistoryMessage['role']; readonly content: string }[];
    readonly reactCycle?: { readonly doneCriteria: readonly string[] };
  };
  readonly outputConfig?: { readonly outputName: string; readonly description?: string; readonly schema: AgentSchema; readonly repair?: boolean };
  readonly toolConfig?: { readonly tools: readonly { readonly name: string; readonly requiresApproval?: boolean }[] };
  readonly runConfig?: {
    readonly maxTurns?: number;
    readonly waitTimeoutMs?: number;
    readonly repairInvalidAnswers?: number;
    readonly verification?: AgentCoreReactConfig['verification'];
  };
}

/**
 * The agent config a definition runs with, its prompts filled in.
 *
 * @example
 * ```ts
 * agentConfigOf(definition, { person: 'Ada' }, subagents, '').maxIterations // runConfig.maxTurns, or 5
 * ```
 */
export function agentConfigOf(definition: ConfiguredDefinition, inputs: Readonly<Record<string, unknown>>, subagents: { readonly specs: readonly ToolSpec[] }, cycle: string): AgentCoreReactConfig {
  const tools = [...(definition.toolConfig?.tools ?? []), ...subagents.specs];
  const approved = (definition.toolConfig?.tools ?? []).filter((tool) => tool.requiresApproval === true).map((tool) => tool.name);
  const output = definition.outputConfig;
  const instructions = [renderTemplate(definition.promptConfig.systemPrompt, inputs, 'promptConfig.systemPrompt')];
  // The schema itself is in the prompt already (the agent's outputSchema): say what the output is.
  if (output !== undefined) instructions.push(`Your final answer's output is the ${output.outputName}${output.description ? `: ${output.description}` : ''}.`);
  if (cycle !== '') instructions.push(cycle);
  return {
    strategy: 'react',
    maxIterations: definition.runConfig?.maxTurns ?? DEFAULT_MAX_TURNS,
    allowedTools: tools.map((tool) => tool.name),
    instructions: instructions.join('\n\n'),
    ...(approved.length > 0 && { requiresApproval: approved }),
    ...(definition.runConfig?.waitTimeoutMs !== undefined && { waitTimeoutMs: definition.runConfig.waitTimeoutMs }),
    // The model is shown, and the run checks, the schema's JSON Schema: plain data, as the log keeps it.
    ...(output !== undefined && { outputSchema: { ...requireJsonSchema(output.schema) } }),
    ...(output?.repair === true && { outputRepair: true }),
    ...(definition.runConfig?.repairInvalidAnswers !== undefined && { onInvalidAnswer: { repair: definition.runConfig.repairInvalidAnswers } }),
    ...verificationOf(definition),
  };
}

/**
 * The agent's `verification`, when the definition verifies its answers: its runConfig's, with the
 * REACT_CYCLE's Done Criteria added to the criteria the completeness check asks for.
 */
function verificationOf(definition: ConfiguredDefinition): Pick<AgentCoreReactConfig, 'verification'> {
  const verification = definition.runConfig?.verification;
  if (verification === undefined || verification === 'off') return {};
  const done = definition.promptConfig.reactCycle?.doneCriteria ?? [];
  if (verification === 'self') return { verification: done.length === 0 ? 'self' : { criteria: [...done] } };
  const criteria = [...(verification.criteria ?? []), ...done];
  return { verification: { ...verification, ...(criteria.length > 0 && { criteria }) } };
}

/**
 * A run's input: the definition's task (`promptConfig.query`) with its variables filled in, or
 * else the inputs themselves.
 *
 * @example
 * ```ts
 * inputOf({ promptConfig: { systemPrompt: '', query: 'Review ${file}' } }, { file: 'a.ts' }); // 'Review a.ts'
 * ```
 */
export function inputOf(definition: Pick<ConfiguredDefinition, 'promptConfig'>, inputs: Readonly<Record<string, unknown>>): unknown {
  const { query } = definition.promptConfig;
  return query === undefined ? inputs : renderTemplate(query, inputs, 'promptConfig.query');
}

/**
 * The conversation a run starts from: the definition's `initialMessages`, their variables filled in.
 *
 * @example
 * ```ts
 * historyOf(definition, { person: 'Ada' }); // [{ role: 'user', content: 'Hello, Ada' }], or undefined
 * ```
 */
export function historyOf(definition: Pick<ConfiguredDefinition, 'promptConfig'>, inputs: Readonly<Record<string, unknown>>): HistoryMessage[] | undefined {
  return definition.promptConfig.initialMessages?.map((message, i) => ({
    role: message.role,
    content: renderTemplate(message.content, inputs, `promptConfig.initialMessages[${i}]`),
  }));
}
