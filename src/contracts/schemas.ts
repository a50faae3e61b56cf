import { createRequire } from 'node:module';
import type { Ajv as AjvClass, ErrorObject, Options, ValidateFunction } from 'ajv';
import type * as AjvModule from 'ajv';
import type {
  AgentCoreReactConfig,
  AgentEnvelope,
  AgentEvent,
  FlowDefinition,
  ModelResponse,
} from './schema-types.js';
import { compilePlainSchema } from './plainSchema.js';

const require = createRequire(import.meta.url);

/**
 * A new ajv instance, ajv required on first use: ajv and its dependencies are about a third of the
 * modules `import 'redflow'` would load, and nothing is checked against a schema at import time.
 * ajv is CommonJS, so `require` gives it synchronously and every validator below stays synchronous.
 */
function createAjv(options: Options): AjvClass {
  const { Ajv } = require('ajv') as typeof AjvModule;
  return new Ajv(options);
}

/** The JSON Schemas of `schemas/`, by file name: the contracts everything else is checked against. */
export const SchemaFile = {
  agentCore: 'agent-core.react.schema.json',
  modelResponse: 'model-response.schema.json',
  envelope: 'envelope.schema.json',
  agentEvent: 'agent-event.schema.json',
  flow: 'flow.schema.json',
  /** `POST /api/runs` of `redflow serve` (its type is `StartRunRequest` in src/server/apiTypes.ts). */
  startRunRequest: 'http/start-run-request.schema.json',
  /** `POST /api/runs/:traceId/abort` of `redflow serve` (`AbortRunRequest`). */
  abortRunRequest: 'http/abort-run-request.schema.json',
  /** `POST /api/runs/:traceId/fork` of `redflow serve` (`ForkRunRequest`). */
  forkRunRequest: 'http/fork-run-request.schema.json',
  /** `POST /api/runs/:traceId/tool-results` of `redflow serve` (`ToolResultRequest`). */
  toolResultRequest: 'http/tool-result-request.schema.json',
  /** `POST /api/runs/:traceId/approval` of `redflow serve` (`ApprovalRequest`). */
  approvalRequest: 'http/approval-request.schema.json',
  /** `POST /api/runs/:traceId/answer` of `redflow serve` (`AnswerRequest`). */
  answerRequest: 'http/answer-request.schema.json',
  /** `POST /api/agent/react_step` of `redflow serve` (`ReactStepRequest` in src/stepService/reactStepTypes.ts). */
  reactStepRequest: 'http/react-step-request.schema.json',
  /** What `POST /api/agent/react_step` answers (`ReactStepResponse`). */
  reactStepResponse: 'http/react-step-response.schema.json',
} as const;

/** Reads one of the bundled schemas (they ship in the package's `schemas/` folder). */
export function loadSchema(file: (typeof SchemaFile)[keyof typeof SchemaFile]): Record<string, unknown> {
  return require(`../../schemas/${file}`) as Record<string, unknown>;
}

/** Options kept equal to those of scripts/generate-validators.mjs, so both give the same verdicts. */
function newAjv(): AjvClass {
  const ajv = createAjv({ strict: true, strictRequired: false, strictTypes: false, allErrors: false });
  // Read only by scripts/generate-types.mjs.
  ajv.addKeyword({ keyword: 'tsType', schemaType: 'string' });
  for (const file of Object.values(SchemaFile)) ajv.addSchema(loadSchema(file), file);
  return ajv;
}

let ajv: AjvClass | undefined;

/**
 * The contracts compiled ahead of time by scripts/generate-validators.mjs (run by the build), by ajv ref: compiling them here took ajv most of a second, the event schema
 * alone over half, longer than the rest of a short `redflow run`. Required on first use.
 */
let precompiled: Readonly<Record<string, ValidateFunction>> | undefined;

/** The build's compiled contracts; none where it has not run (a checkout's tests before `npm run build`): each is compiled here then. */
function precompiledContracts(): Record<string, ValidateFunction> {
  try {
    return require('../../schemas/validators.generated.cjs') as Record<string, ValidateFunction>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return {};
    throw error;
  }
}

function precompiledValidator<T>(ref: string): ValidateFunction<T> | undefined {
  precompiled ??= precompiledContracts();
  return precompiled[ref] as ValidateFunction<T> | undefined;
}

/** Taken from the precompiled contracts, or compiled on first use, once per process, for a ref they do not hold. */
function compiled<T>(ref: string): () => ValidateFunction<T> {
  let validate: ValidateFunction<T> | undefined;
  return () => {
    if (validate) return validate;
    const ready = precompiledValidator<T>(ref);
    if (ready) return (validate = ready);
    ajv ??= newAjv();
    const found = ajv.getSchema<T>(ref);
    if (!found) throw new Error(`schema ${ref} is not registered`);
    return (validate = found);
  };
}

const compilers = {
  agentCore: compiled<AgentCoreReactConfig>(SchemaFile.agentCore),
  modelResponse: compiled<ModelResponse>(SchemaFile.modelResponse),
  envelope: compiled<AgentEnvelope>(SchemaFile.envelope),
  agentEvent: compiled<AgentEvent>(SchemaFile.agentEvent),
  flow: compiled<FlowDefinition>(SchemaFile.flow),
  triggerInputConfig: compiled(`${SchemaFile.flow}#/definitions/TriggerInputConfig`),
  modelLlmConfig: compiled(`${SchemaFile.flow}#/definitions/ModelLlmConfig`),
  memoryKvConfig: compiled(`${SchemaFile.flow}#/definitions/MemoryKvConfig`),
  toolHttpConfig: compiled(`${SchemaFile.flow}#/definitions/ToolHttpConfig`),
  toolModuleConfig: compiled(`${SchemaFile.flow}#/definitions/ToolModuleConfig`),
  toolPostgresConfig: compiled(`${SchemaFile.flow}#/definitions/ToolPostgresConfig`),
  toolMcpConfig: compiled(`${SchemaFile.flow}#/definitions/ToolMcpConfig`),
  toolClientConfig: compiled(`${SchemaFile.flow}#/definitions/ToolClientConfig`),
  toolFlowConfig: compiled(`${SchemaFile.flow}#/definitions/ToolFlowConfig`),
  agentRefConfig: compiled(`${SchemaFile.flow}#/definitions/AgentRefConfig`),
  agentA2aConfig: compiled(`${SchemaFile.flow}#/definitions/AgentA2aConfig`),
  responseChatConfig: compiled(`${SchemaFile.flow}#/definitions/ResponseChatConfig`),
  responseEndConfig: compiled(`${SchemaFile.flow}#/definitions/ResponseEndConfig`),
  startRunRequest: compiled(SchemaFile.startRunRequest),
  abortRunRequest: compiled(SchemaFile.abortRunRequest),
  forkRunRequest: compiled(SchemaFile.forkRunRequest),
  toolResultRequest: compiled(SchemaFile.toolResultRequest),
  approvalRequest: compiled(SchemaFile.approvalRequest),
  answerRequest: compiled(SchemaFile.answerRequest),
  reactStepResponse: compiled(SchemaFile.reactStepResponse),
};

/**
 * The contracts, each compiled on first use and then kept. Each is an ajv validate function whose
 * `errors` property explains a failure; use {@link describeSchemaErrors} to turn it into a message.
 */
export const validators = Object.defineProperties(
  {},
  Object.fromEntries(Object.entries(compilers).map(([name, get]) => [name, { get, enumerable: true }])),
) as { readonly [K in keyof typeof compilers]: ReturnType<(typeof compilers)[K]> };

/**
 * Ajv for schemas written by users (tool input schemas, trigger input schemas): lenient about
 * unknown keywords, and keeping no schema by `$id`, so one schema can be compiled again and again.
 */
// No format is registered, so `format` (zod writes email, uuid, date-time, …) is an annotation here:
// ignored quietly instead of a warning on stderr at every compile.
let userAjv: AjvClass | undefined;
const compiledUserSchemas = new WeakMap<object, InputValidator>();

/** A compiled user-supplied JSON Schema: `true` or a list of readable problems. */
export type InputValidator = (value: unknown) => true | string;

/**
 * Compiles a JSON Schema that a user wrote (a tool's inputSchema). Throws with ajv's explanation
 * when the schema itself is invalid.
 *
 * @example
 * ```ts
 * const check = compileUserSchema({ type: 'object', required: ['city'] });
 * check({}) // "must have required property 'city'"
 * ```
 */
export function compileUserSchema(schema: object): InputValidator {
  const cached = compiledUserSchemas.get(schema);
  if (cached) return cached;
  // A plain schema (most tool inputs) is checked without loading ajv: see plainSchema.ts.
  const plain = compilePlainSchema(schema);
  if (plain) {
    const check: InputValidator = (value) => {
      const found = plain(value);
      return found ? describeSchemaErrors([found]) : true;
    };
    compiledUserSchemas.set(schema, check);
    return check;
  }
  userAjv ??= createAjv({ strict: false, allErrors: false, addUsedSchema: false, validateFormats: false });
  const validate = userAjv.compile(schema);
  const check: InputValidator = (value) => (validate(value) ? true : describeSchemaErrors(validate.errors));
  compiledUserSchemas.set(schema, check);
  return check;
}

/** Ajv for an agent's outputSchema: every error is reported, since they go back to the model to correct. */
let outputAjv: AjvClass | undefined;
const compiledOutputSchemas = new WeakMap<object, OutputValidator>();

/** A compiled outputSchema: `true`, or each problem as a readable line (at most 20). */
export type OutputValidator = (value: unknown) => true | readonly string[];

/**
 * Compiles an agent's outputSchema (a JSON Schema the user wrote). Throws with ajv's explanation
 * when the schema itself is invalid.
 *
 * @example
 * ```ts
 * const check = compileOutputSchema({ type: 'object', required: ['summary'] });
 * check({}) // ["(root) must have required property 'summary'"]
 * ```
 */
export function compileOutputSchema(schema: object): OutputValidator {
  const cached = compiledOutputSchemas.get(schema);
  if (cached) return cached;
  outputAjv ??= createAjv({ strict: false, allErrors: true, addUsedSchema: false, validateFormats: false });
  const validate = outputAjv.compile(schema);
  const check: OutputValidator = (value) =>
    validate(value) ? true : (validate.errors ?? []).slice(0, 20).map((error) => describeSchemaErrors([error]));
  compiledOutputSchemas.set(schema, check);
  return check;
}

/** One readable line from ajv's errors, e.g. `/confidence must be <= 1`. */
export function describeSchemaErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'does not match the schema';
  return errors
    .slice(0, 3)
    .map((e) => {
      const where = e.instancePath || '(root)';
      if (e.keyword === 'additionalProperties') {
        return `${where} has unknown property '${String((e.params as { additionalProperty: string }).additionalProperty)}'`;
      }
      if (e.keyword === 'enum') {
        return `${where} must be one of ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`;
      }
      return `${where} ${e.message ?? 'is invalid'}`;
    })
    .join('; ');
}
