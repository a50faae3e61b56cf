import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { AgentCoreReactConfig, HistoryMessage, ModelLlmConfig } from '../contracts/schema-types.js';
import { compileUserSchema, describeSchemaErrors, validators, type InputValidator } from '../contracts/schemas.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { DefinitionTool } from './agentTool.js';
import type { JsonSchema } from './schemaCheck.js';
import { jsonSchemaOf } from './schemaToJson.js';
import type { ReactCycle } from './reactCycle.js';
import { templateVariables } from './template.js';
import { checkRun, describe, isObject, type Problem } from './definitionParts.js';

export { DEFAULT_MAX_TURNS, MAX_TURNS } from './definitionParts.js';

/**
 * What the agent is told. `${name}` in any of these texts is replaced by the run's input `name`
 * (see `renderTemplate`).
 */
export interface PromptConfig {
  /**
   * What the agent is for and how it works: added to Redflow's ReAct prompt (which lists the tools
   * and asks for one JSON action per turn) as the agent's instructions.
   */
  readonly systemPrompt: string;
  /** The task, sent as the run's input. Default: the inputs, as one JSON object. */
  readonly query?: string;
  /** Earlier turns shown to the model before the task. */
  readonly initialMessages?: readonly HistoryMessage[];
  /** How the agent works step by step (an `.agent.md` file's REACT_CYCLE): added to the instructions, kept as data. */
  readonly reactCycle?: ReactCycle;
}

/**
 * Which model answers, with the settings of a flow's `model.llm` node: `provider` (`openai`, the
 * default, `ollama`, `anthropic`, `scripted`, …), `model`, `baseUrl`, `apiKeyEnv`, `temperature`,
 * `maxTokens`, `timeoutMs`, `maxRetries`, `contextTokens`; `answers` for a scripted model.
 */
export type ModelConfig = ModelLlmConfig;

/** When a run stops trying. */
export interface RunConfig {
  /** Turns (one model call and at most one tool call each) before the run ends `max_turns`: 1–20, default 5. */
  readonly maxTurns?: number;
  /** The run ends `timeout` after this long (ms). Default: no limit. */
  readonly timeoutMs?: number;
  /**
   * How long a run waits for a person's approval or a client tool's result before it ends blocked
   * (`WAIT_EXPIRED`), in ms: the agent's `waitTimeoutMs`. Default one day, at most 30 days.
   */
  readonly waitTimeoutMs?: number;
  /**
   * How many times per run an answer that breaks the answer format (INVALID_JSON, TOOL_NOT_ALLOWED,
   * …) goes back to the model with its error, each one more turn within `maxTurns`: the agent's
   * `onInvalidAnswer.repair`, 0–10. Default 0: the first ends the run blocked with its code.
   */
  readonly repairInvalidAnswers?: number;
  /**
   * Verify the final answer before the run ends (docs/verification.md): "self", or { rubric?,
   * criteria?, maxFailures? }; the agent's `verification`. Default "off". An `.agent.md` file's
   * Done Criteria are added to the criteria.
   */
  readonly verification?: AgentCoreReactConfig['verification'];
}

/**
 * The tools the agent may call: tools Redflow runs (an `AgentTool`, made with `defineTool`, or a
 * plain `ToolDefinition`), and tools the client runs (`executor: 'client'`). None at all is an
 * agent that answers directly.
 */
export interface ToolConfig {
  readonly tools: readonly DefinitionTool[];
}

/** One input a run takes. */
export interface InputSpec {
  readonly type: 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object';
  readonly description?: string;
  /** Default true. */
  readonly required?: boolean;
}

/** The inputs a run takes, by name: each name can be used as `${name}` in the prompts. */
export interface InputConfig {
  readonly inputs: Readonly<Record<string, InputSpec>>;
}

/**
 * A structured result: the agent's `outputSchema`. The model is shown the schema (as JSON Schema)
 * and gives its final answer's `output` (or a message that is JSON), which the run checks against
 * it; a Standard Schema then checks it again, and a matching output becomes the result's `output`,
 * typed by the schema (through `parse`, when given). One that does not match leaves `output` out
 * and says why (`AGENT_OUTPUT_INVALID`, `validated: false`), with the answer as given kept: it never
 * fails the run itself.
 */
export interface OutputConfig<TOutput = unknown> {
  /** What the output is called in the prompt (`review`, `summary`). */
  readonly outputName: string;
  readonly description?: string;
  /**
   * What the output must be: a Standard Schema (zod 4, valibot, arktype, …), which also gives the
   * result's `output` its type and value, or a JSON Schema.
   */
  readonly schema: StandardSchemaV1<unknown, TOutput> | JsonSchema;
  /**
   * Turns the checked value into the result's `output` (a class instance, say); a throw makes the
   * answer invalid like a schema mismatch. Default: the value as the schema gives it.
   */
  readonly parse?: (value: unknown) => TOutput;
  /** Send an output that does not match back to the model once, with what is wrong (the agent's `outputRepair`). */
  readonly repair?: boolean;
}

/**
 * An agent as one typed object: what it is told, which model answers, its limits, its tools, the
 * inputs a run takes and the output it gives. `AgentExecutor` runs it through the same statechart
 * and event log as a flow, so its runs are logged, replayed and resumed like any other; a module
 * exporting one as its default export runs with `redflow run <file.ts>`. `TOutput` is the type of
 * its result's `output`: {@link defineAgent} infers it from `outputConfig.schema`.
 *
 * @example
 * ```ts
 * const greeter: AgentDefinition = {
 *   name: 'greeter',
 *   description: 'Greets a person by name',
 *   promptConfig: { systemPrompt: 'Greet ${person} warmly.', query: 'Say hello to ${person}.' },
 *   modelConfig: { provider: 'openai', model: 'gpt-4o-mini' },
 *   inputConfig: { inputs: { person: { type: 'string' } } },
 * };
 * ```
 */
export interface AgentDefinition<TOutput = unknown> {
  /** Unique in a registry; 1–64 letters, digits, `_` or `-`. */
  readonly name: string;
  readonly description: string;
  readonly promptConfig: PromptConfig;
  readonly modelConfig: ModelConfig;
  readonly runConfig?: RunConfig;
  readonly toolConfig?: ToolConfig;
  readonly inputConfig?: InputConfig;
  readonly outputConfig?: OutputConfig<TOutput>;
  /** Agents called like tools (`{ task }`), each call a child run with its own log (as a flow's `agent.ref`): definitions, or paths of `.agent.md` files and definition modules. */
  readonly subagents?: readonly (AgentDefinition | string)[];
}

/**
 * Keeps a definition's types: its result's `output` is typed by `outputConfig.schema` (a Standard
 * Schema's output type). Returns `definition` itself.
 *
 * @example
 * ```ts
 * const reviewer = defineAgent({ …, outputConfig: { outputName: 'review', schema: z.object({ verdict: z.enum(['ok', 'fix']) }) } });
 * const { output } = await new AgentExecutor().execute(reviewer); // output?: { verdict: 'ok' | 'fix' }
 * ```
 */
export function defineAgent<TOutput = unknown>(definition: AgentDefinition<TOutput>): AgentDefinition<TOutput> {
  return definition;
}


const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INPUT_TYPES: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object']);

/** A problem when `schema` is neither a JSON Schema nor a Standard Schema that can describe itself as one (the model must be shown it). */
function checkSchema(schema: unknown, path: string, problems: Problem[]): void {
  const verdict = jsonSchemaOf(schema);
  if (!verdict.ok) problems.push({ path, message: verdict.message, hint: verdict.hint });
}

function checkPrompt(prompt: unknown, problems: Problem[]): string[] {
  if (!isObject(prompt)) {
    problems.push({ path: 'promptConfig', message: `must be an object with a systemPrompt, got ${describe(prompt)}` });
    return [];
  }
  const texts: [string, string][] = [];
  if (typeof prompt.systemPrompt !== 'string' || prompt.systemPrompt.trim() === '') {
    problems.push({ path: 'promptConfig.systemPrompt', message: `must be a non-empty string, got ${describe(prompt.systemPrompt)}` });
  } else texts.push(['promptConfig.systemPrompt', prompt.systemPrompt]);
  if (prompt.query !== undefined) {
    if (typeof prompt.query !== 'string') problems.push({ path: 'promptConfig.query', message: `must be a string, got ${describe(prompt.query)}` });
    else texts.push(['promptConfig.query', prompt.query]);
  }
  if (prompt.initialMessages !== undefined) {
    if (!Array.isArray(prompt.initialMessages)) {
      problems.push({ path: 'promptConfig.initialMessages', message: `must be an array of { role, content }, got ${describe(prompt.initialMessages)}` });
    } else {
      prompt.initialMessages.forEach((message: unknown, i) => {
        const path = `promptConfig.initialMessages[${i}]`;
        if (!isObject(message) || (message.role !== 'user' && message.role !== 'assistant') || typeof message.content !== 'string') {
          problems.push({ path, message: 'must be { role: "user" | "assistant", content: string }' });
        } else texts.push([path, message.content]);
      });
    }
  }
  return texts.flatMap(([, text]) => templateVariables(text));
}

function checkTools(config: unknown, problems: Problem[]): void {
  // No tools is an agent that answers directly.
  if (config === undefined) return;
  if (!isObject(config) || !Array.isArray(config.tools)) {
    problems.push({ path: 'toolConfig.tools', message: 'must be an array of tools ({ name, description, inputSchema, execute } or, for a client tool, executor: "client")' });
    return;
  }
  const seen = new Set<string>();
  config.tools.forEach((tool: unknown, i) => {
    const path = `toolConfig.tools[${i}]`;
    if (!isObject(tool)) {
      problems.push({ path, message: `must be a ToolDefinition object, got ${describe(tool)}` });
      return;
    }
    if (typeof tool.name !== 'string' || !NAME.test(tool.name)) {
      problems.push({ path: `${path}.name`, message: `must be 1-64 letters, digits, '_' or '-', got ${describe(tool.name)}` });
    } else if (seen.has(tool.name)) {
      problems.push({ path: `${path}.name`, message: `"${tool.name}" is the name of an earlier tool too: tool names must differ` });
    } else seen.add(tool.name);
    if (typeof tool.description !== 'string') problems.push({ path: `${path}.description`, message: `must be a string, got ${describe(tool.description)}` });
    checkSchema(tool.inputSchema, `${path}.inputSchema`, problems);
    if (tool.requiresApproval !== undefined && typeof tool.requiresApproval !== 'boolean') {
      problems.push({ path: `${path}.requiresApproval`, message: `must be true or false, got ${describe(tool.requiresApproval)}` });
    }
    if (tool.executor === 'client') {
      // The client runs it: Redflow has nothing to call, nor a result of its own to check.
      if (tool.execute !== undefined) problems.push({ path: `${path}.execute`, message: 'a client tool (executor: "client") is run by the client: leave execute out, or executor' });
      if (tool.outputSchema !== undefined) problems.push({ path: `${path}.outputSchema`, message: 'a client tool (executor: "client") has no outputSchema: its result is what the client posts' });
      return;
    }
    if (tool.executor !== undefined) problems.push({ path: `${path}.executor`, message: `must be "client" (a tool the client runs) or left out, got ${describe(tool.executor)}` });
    if (typeof tool.execute !== 'function') problems.push({ path: `${path}.execute`, message: `must be a function, got ${describe(tool.execute)} (a tool the client runs says executor: "client")` });
    if (tool.outputSchema !== undefined) checkSchema(tool.outputSchema, `${path}.outputSchema`, problems);
  });
}

function checkInputs(config: unknown, problems: Problem[]): Set<string> | undefined {
  if (config === undefined) return undefined;
  if (!isObject(config) || !isObject(config.inputs)) {
    problems.push({ path: 'inputConfig.inputs', message: 'must be an object of { type, description?, required? } by input name' });
    return undefined;
  }
  const names = new Set<string>();
  for (const [name, spec] of Object.entries(config.inputs)) {
    const path = `inputConfig.inputs.${name}`;
    if (!IDENTIFIER.test(name)) problems.push({ path, message: 'an input name must be an identifier (letters, digits, _; not starting with a digit), so ${name} can name it' });
    if (!isObject(spec) || typeof spec.type !== 'string' || !INPUT_TYPES.has(spec.type)) {
      problems.push({ path: `${path}.type`, message: `must be one of ${[...INPUT_TYPES].join(', ')}` });
    } else if (spec.required !== undefined && typeof spec.required !== 'boolean') {
      problems.push({ path: `${path}.required`, message: `must be true or false, got ${describe(spec.required)}` });
    }
    names.add(name);
  }
  return names;
}

function checkOutput(config: unknown, problems: Problem[]): void {
  if (config === undefined) return;
  if (!isObject(config)) {
    problems.push({ path: 'outputConfig', message: `must be { outputName, schema }, got ${describe(config)}` });
    return;
  }
  if (typeof config.outputName !== 'string' || !IDENTIFIER.test(config.outputName)) {
    problems.push({ path: 'outputConfig.outputName', message: `must be an identifier (letters, digits, _), got ${describe(config.outputName)}` });
  }
  checkSchema(config.schema, 'outputConfig.schema', problems);
  if (config.repair !== undefined && typeof config.repair !== 'boolean') {
    problems.push({ path: 'outputConfig.repair', message: `must be true or false, got ${describe(config.repair)}` });
  }
  if (config.parse !== undefined && typeof config.parse !== 'function') {
    problems.push({ path: 'outputConfig.parse', message: `must be a function, got ${describe(config.parse)}` });
  }
}

/** Subagents are definitions or paths; each REACT_CYCLE action names a tool or a subagent (one given by path is named once loaded). */
function checkCalls(value: Record<string, unknown>, problems: Problem[]): void {
  const subagents: unknown[] = Array.isArray(value.subagents) ? value.subagents : [];
  if (value.subagents !== undefined && (!Array.isArray(value.subagents) || subagents.some((s) => typeof s !== 'string' && !isObject(s)))) problems.push({ path: 'subagents', message: 'must be an array of agent definitions or paths of .agent.md files and definition modules' });
  const cycle = isObject(value.promptConfig) ? value.promptConfig.reactCycle : undefined;
  if (!isObject(cycle) || !Array.isArray(cycle.actions) || subagents.some((s) => typeof s === 'string')) return;
  const callable = new Set([...(isObject(value.toolConfig) && Array.isArray(value.toolConfig.tools) ? value.toolConfig.tools : []), ...subagents].map((entry: unknown) => (isObject(entry) ? entry.name : undefined)));
  cycle.actions.forEach((action: unknown, i) => {
    if (!isObject(action) || !callable.has(action.name)) problems.push({ path: `promptConfig.reactCycle.actions[${i}]`, message: `must name one of the agent's tools or subagents, got ${describe(isObject(action) ? action.name : action)}` });
  });
}

/**
 * Checks that `value` is an {@link AgentDefinition}, all of it at once: names, prompts, the model's
 * settings (as a `model.llm` node's), limits, each tool's shape and schemas, the inputs, the
 * output schema, and that every `${variable}` of the prompts is a declared input (when the
 * definition declares its inputs). Every schema must be a JSON Schema or a Standard Schema that
 * describes itself as one (the model is shown it). Nothing is run or imported.
 *
 * @throws RedflowError `AGENT_DEFINITION_INVALID`, listing every problem with where it is; `path`
 *   is the first one's, `hint` the first schema problem's fix, or what a definition holds.
 *
 * @example
 * ```ts
 * checkAgentDefinition(imported.default); // throws, or `imported.default` is an AgentDefinition
 * ```
 */
export function checkAgentDefinition(value: unknown): asserts value is AgentDefinition {
  const problems: Problem[] = [];
  if (!isObject(value)) {
    problems.push({ path: '(root)', message: `an agent definition is an object, got ${describe(value)}` });
  } else {
    if (typeof value.name !== 'string' || !NAME.test(value.name)) {
      problems.push({ path: 'name', message: `must be 1-64 letters, digits, '_' or '-', got ${describe(value.name)}` });
    }
    if (typeof value.description !== 'string' || value.description.trim() === '') {
      problems.push({ path: 'description', message: `must be a non-empty string, got ${describe(value.description)}` });
    }
    const variables = checkPrompt(value.promptConfig, problems);
    if (!isObject(value.modelConfig)) {
      problems.push({ path: 'modelConfig', message: `must be an object ({ provider, model, … }, as a model.llm node's config), got ${describe(value.modelConfig)}` });
    } else if (!validators.modelLlmConfig(value.modelConfig)) {
      problems.push({ path: 'modelConfig', message: describeSchemaErrors(validators.modelLlmConfig.errors) });
    }
    checkRun(value.runConfig, problems);
    checkTools(value.toolConfig, problems);
    const declared = checkInputs(value.inputConfig, problems);
    checkOutput(value.outputConfig, problems);
    checkCalls(value, problems);
    if (declared !== undefined) {
      for (const name of new Set(variables)) {
        if (!declared.has(name)) problems.push({ path: 'promptConfig', message: `uses \${${name}}, which is not in inputConfig.inputs` });
      }
    }
  }
  if (problems.length === 0) return;
  const name = isObject(value) && typeof value.name === 'string' ? ` "${value.name}"` : '';
  const specific = problems.find((problem) => problem.hint !== undefined)?.hint;
  throw new RedflowError(
    errorInfo(ErrorCode.AGENT_DEFINITION_INVALID, `agent definition${name} is invalid: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, {
      hint:
        specific ??
        'an AgentDefinition has name, description, promptConfig { systemPrompt, query?, initialMessages? }, modelConfig (a model.llm config), and optionally runConfig { maxTurns, timeoutMs, waitTimeoutMs }, toolConfig { tools }, inputConfig { inputs }, outputConfig { outputName, schema }',
      path: (problems[0] as Problem).path,
    }),
  );
}

// Compiled once per input config (definitions are long-lived objects, usually module constants).
const inputCheckers = new WeakMap<InputConfig, InputValidator>();

/**
 * Checks a run's inputs against the definition's `inputConfig`: every required input given, each
 * of its type, no unknown name (a typo would otherwise leave a `${variable}` unfilled). Without an
 * `inputConfig`, any object of inputs is taken.
 *
 * @throws RedflowError `AGENT_INPUT_INVALID`
 */
export function checkAgentInputs(definition: AgentDefinition, inputs: unknown): asserts inputs is Record<string, unknown> {
  const fail = (why: string) =>
    new RedflowError(
      errorInfo(ErrorCode.AGENT_INPUT_INVALID, `the inputs of agent "${definition.name}" ${why}`, {
        hint: `give execute(definition, { inputs: { … } }) the inputs declared in inputConfig${definition.inputConfig ? ` (${Object.keys(definition.inputConfig.inputs).join(', ')})` : ''}`,
      }),
    );
  if (!isObject(inputs)) throw fail(`must be an object of values by name, got ${describe(inputs)}`);
  const config = definition.inputConfig;
  if (config === undefined) return;
  let check = inputCheckers.get(config);
  if (check === undefined) {
    const entries = Object.entries(config.inputs);
    check = compileUserSchema({
      type: 'object',
      additionalProperties: false,
      required: entries.filter(([, spec]) => spec.required !== false).map(([name]) => name),
      properties: Object.fromEntries(entries.map(([name, spec]) => [name, { type: spec.type }])),
    });
    inputCheckers.set(config, check);
  }
  const verdict = check(inputs);
  if (verdict !== true) throw fail(`do not match inputConfig: ${verdict}`);
}
