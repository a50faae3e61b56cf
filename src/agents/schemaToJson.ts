import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { compileUserSchema } from '../contracts/schemas.js';
import { isStandardSchema, type AgentSchema, type JsonSchema } from './schemaCheck.js';

/**
 * What the model is shown for a schema, and what the run's log holds: a plain JSON Schema. A
 * Standard Schema describes itself through the Standard JSON Schema interface
 * (`~standard.jsonSchema`, https://standardschema.dev/json-schema), which zod 4.2 and later,
 * arktype, and valibot through `toStandardJsonSchema` of `@valibot/to-json-schema` implement: no
 * code here knows any one library. One without it gets a coded problem saying how to give one.
 */
export type JsonSchemaOf = { readonly ok: true; readonly schema: Record<string, unknown> } | { readonly ok: false; readonly message: string; readonly hint: string };

// Ajv here checks draft-07 (its default); a library that cannot write draft-07 is asked for 2020-12,
// whose common keywords (type, properties, required, items, enum, …) mean the same in draft-07.
const TARGETS: readonly StandardJSONSchemaV1.Target[] = ['draft-07', 'draft-2020-12'];

// Definitions are long-lived (module constants): each schema is converted once.
const converted = new WeakMap<object, JsonSchemaOf>();

/** The fix for a Standard Schema without the JSON Schema interface, by library. */
function missingInterfaceHint(vendor: string): string {
  const explicit = 'or give the model a JSON Schema for it: withJsonSchema(schema, { type: "object", … })';
  if (vendor === 'zod') return `zod describes its schemas as JSON Schema from version 4.2: upgrade zod, ${explicit} (e.g. withJsonSchema(schema, z.toJSONSchema(schema)))`;
  if (vendor === 'valibot') return `wrap it: toStandardJsonSchema(schema) from @valibot/to-json-schema, ${explicit}`;
  return `use a version of ${vendor} that implements the Standard JSON Schema interface (~standard.jsonSchema), ${explicit}`;
}

function fail(message: string, hint: string): JsonSchemaOf {
  return { ok: false, message, hint };
}

/** `schema` as plain JSON data (what a log can hold), its `$schema` left out (it says nothing to a model). */
function plain(schema: unknown): Record<string, unknown> | string {
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch (error) {
    return `is not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  const value = text === undefined ? undefined : (JSON.parse(text) as unknown);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not a JSON Schema object';
  const { $schema: _dialect, ...rest } = value as Record<string, unknown>;
  return rest;
}

/** Checks that ajv can compile `schema`; the problem in words when it cannot. */
function compileProblem(schema: object): string | undefined {
  try {
    compileUserSchema(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function convertStandard(schema: StandardSchemaV1): JsonSchemaOf {
  const props = schema['~standard'] as StandardSchemaV1.Props & Partial<Pick<StandardJSONSchemaV1.Props, 'jsonSchema'>>;
  const vendor = typeof props.vendor === 'string' ? props.vendor : 'unknown';
  const converter = props.jsonSchema;
  if (typeof converter?.input !== 'function') {
    return fail(`is a ${vendor} schema that cannot describe itself as JSON Schema for the model (it has no ~standard.jsonSchema)`, missingInterfaceHint(vendor));
  }
  let first: unknown;
  for (const target of TARGETS) {
    let written: unknown;
    try {
      // The input side: what the model writes, before any transform or default of the schema.
      written = converter.input({ target });
    } catch (error) {
      first ??= error;
      continue;
    }
    const json = plain(written);
    if (typeof json === 'string') return fail(`is a ${vendor} schema whose JSON Schema ${json}`, `give the model a JSON Schema for it: withJsonSchema(schema, { type: "object", … })`);
    const problem = compileProblem(json);
    if (problem !== undefined) return fail(`is a ${vendor} schema whose JSON Schema is not valid: ${problem}`, 'give the model a valid JSON Schema for it: withJsonSchema(schema, { type: "object", … })');
    return { ok: true, schema: json };
  }
  return fail(
    `is a ${vendor} schema that JSON Schema cannot describe: ${first instanceof Error ? first.message : String(first)}`,
    'leave out what JSON Schema cannot say (transforms, dates, custom types) or give the model a JSON Schema for it: withJsonSchema(schema, { type: "object", … })',
  );
}

/**
 * The JSON Schema of `schema` for the model and the log: a JSON Schema as it is (checked), a
 * Standard Schema through its Standard JSON Schema interface. Remembered per schema object.
 *
 * @example
 * ```ts
 * jsonSchemaOf(z.object({ order: z.string() })); // { ok: true, schema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'], … } }
 * jsonSchemaOf(v.object({ order: v.string() })); // { ok: false, message: 'is a valibot schema that cannot describe itself …', hint: 'wrap it: toStandardJsonSchema(schema) …' }
 * ```
 */
export function jsonSchemaOf(schema: unknown): JsonSchemaOf {
  if ((typeof schema !== 'object' && typeof schema !== 'function') || schema === null || Array.isArray(schema)) {
    return fail(`must be a JSON Schema object or a Standard Schema (zod, valibot, arktype, …), got ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}`, 'give a schema object');
  }
  const known = converted.get(schema);
  if (known !== undefined) return known;
  let verdict: JsonSchemaOf;
  if (isStandardSchema(schema)) verdict = convertStandard(schema);
  else if (typeof schema === 'function') verdict = fail('is a function, not a schema', 'give a JSON Schema object or a Standard Schema');
  else {
    const problem = compileProblem(schema);
    verdict = problem === undefined ? { ok: true, schema: schema as Record<string, unknown> } : fail(`is not a valid JSON Schema: ${problem}`, 'fix the JSON Schema (https://json-schema.org), or give a Standard Schema (zod, valibot, …)');
  }
  converted.set(schema, verdict);
  return verdict;
}

/**
 * The JSON Schema of a schema a checked definition holds (`checkAgentDefinition` refused any other).
 *
 * @throws Error when it has none: a definition that was not checked first.
 */
export function requireJsonSchema(schema: AgentSchema): Record<string, unknown> {
  const verdict = jsonSchemaOf(schema);
  if (!verdict.ok) throw new Error(`a schema of an unchecked agent definition ${verdict.message}`);
  return verdict.schema;
}

/**
 * `schema` with the JSON Schema the model is shown for it given by hand: for a Standard Schema that
 * cannot describe itself (an older zod, a plain valibot schema, a transform or a custom type). Values
 * are still checked, and typed, by `schema`; `jsonSchema` is what the model sees and what the run
 * checks first, so it should not allow less than `schema` does.
 *
 * @example
 * ```ts
 * const when = withJsonSchema(z.string().transform((text) => new Date(text)), { type: 'string', format: 'date-time' });
 * ```
 */
export function withJsonSchema<S extends StandardSchemaV1>(
  schema: S,
  // `object`: a library's own JSON Schema type (an interface, like valibot's and zod's) fits too.
  jsonSchema: JsonSchema | object,
): StandardSchemaV1<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>> & StandardJSONSchemaV1<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>> {
  const props = schema['~standard'];
  const describe = () => ({ ...jsonSchema });
  // A new object (not the library's schema, changed): it checks and types values as `schema` does, and is no more than a Standard Schema.
  return {
    '~standard': {
      version: props.version,
      vendor: props.vendor,
      ...(props.types !== undefined && { types: props.types }),
      validate: (value: unknown, options?: StandardSchemaV1.Options) => props.validate(value, options),
      jsonSchema: { input: describe, output: describe },
    },
  } as unknown as StandardSchemaV1<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>> &
    StandardJSONSchemaV1<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>>;
}
