import type { StandardSchemaV1 } from '@standard-schema/spec';
import { compileOutputSchema } from '../contracts/schemas.js';

/** A JSON Schema, as an object. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/**
 * A schema an agent definition takes wherever it describes data (a tool's input and output, the
 * agent's output): a Standard Schema (https://standardschema.dev: zod 4, valibot, arktype, …), which
 * checks values and gives them their type, or a JSON Schema.
 */
export type AgentSchema = StandardSchemaV1 | JsonSchema;

/** The value a schema gives once it has checked one: a Standard Schema's output type, `Fallback` for a JSON Schema. */
export type SchemaOutput<S, Fallback = unknown> = S extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<S> : Fallback;

/** What a schema takes: a Standard Schema's input type, `Fallback` for a JSON Schema. */
export type SchemaInput<S, Fallback = unknown> = S extends StandardSchemaV1 ? StandardSchemaV1.InferInput<S> : Fallback;

/**
 * True when `value` is a Standard Schema: it has `~standard` with a `validate` function. Functions
 * count too (an arktype type is one).
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return typeof props === 'object' && props !== null && typeof (props as { validate?: unknown }).validate === 'function';
}

/** How a value fared against a schema: the value it gives (a Standard Schema's output), or what is wrong, one line an issue. */
export type SchemaVerdict = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly issues: readonly string[] };

/** At most this many issues are kept: they go into an observation or an error message. */
const MAX_ISSUES = 20;

/**
 * Checks `value` against `schema`: a Standard Schema through its `validate` (which may answer with a
 * promise: an async refinement), a JSON Schema with ajv (every error, as an outputSchema is
 * checked). Never throws: a `validate` that throws is one issue.
 *
 * @example
 * ```ts
 * await checkAgainst(z.object({ a: z.number() }), { a: 'x' }); // { ok: false, issues: ['/a: Invalid input: expected number, received string'] }
 * ```
 */
export async function checkAgainst(schema: AgentSchema, value: unknown): Promise<SchemaVerdict> {
  if (!isStandardSchema(schema)) {
    const verdict = compileOutputSchema(schema)(value);
    return verdict === true ? { ok: true, value } : { ok: false, issues: verdict };
  }
  let result: StandardSchemaV1.Result<unknown>;
  try {
    result = await schema['~standard'].validate(value);
  } catch (error) {
    return { ok: false, issues: [`(root): the ${schema['~standard'].vendor} schema failed: ${error instanceof Error ? error.message : String(error)}`] };
  }
  if (result.issues === undefined) return { ok: true, value: result.value };
  const issues = result.issues.slice(0, MAX_ISSUES).map(describeIssue);
  return { ok: false, issues: issues.length > 0 ? issues : ['(root): does not match the schema'] };
}

/**
 * One issue as a line: where (a JSON Pointer into the value, as ajv says it, or `(root)`), then the
 * schema's own message.
 */
export function describeIssue(issue: StandardSchemaV1.Issue): string {
  const keys = (issue.path ?? []).map((segment) => (typeof segment === 'object' && segment !== null ? segment.key : segment));
  const where = keys.length === 0 ? '(root)' : keys.map((key) => `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
  return `${where}: ${issue.message}`;
}
