/**
 * JSON Schemas rewritten for OpenAI's strict structured outputs (which other providers' constrained
 * decoders accept too): every object closed (`additionalProperties: false`) with all its
 * properties required, an optional property made nullable instead, and only the keywords strict
 * mode takes. Refinements strict mode may refuse (lengths, patterns, formats, bounds) are left
 * out: the core checks the answer against the original schema anyway.
 */

type Schema = Readonly<Record<string, unknown>>;

/** Keywords dropped: checks the core makes, which some strict decoders refuse. */
const REFINEMENTS: ReadonlySet<string> = new Set([
  'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'default', 'examples', 'title', '$schema', '$id', '$comment',
]);

/** Keywords kept as they are (their values are not schemas). */
const KEPT: ReadonlySet<string> = new Set(['type', 'description', 'enum', 'const']);

/** Deepest nesting converted: OpenAI allows 10 levels of objects. */
const MAX_DEPTH = 10;

/**
 * `schema` in strict form, or `undefined` when strict mode cannot express it: an object open to
 * any property (no `properties`, or `additionalProperties` other than false), a keyword such as
 * `oneOf`, `allOf`, `$ref`, `not`, `if`, `patternProperties`, an array without `items`, a schema
 * that is `true` or `{}`.
 *
 * @example
 * ```ts
 * strictSchema({ type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] });
 * // { type: 'object', properties: { q: { type: 'string' }, n: { type: ['integer', 'null'] } }, required: ['q', 'n'], additionalProperties: false }
 * ```
 */
export function strictSchema(schema: unknown, depth = 0): Schema | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || depth > MAX_DEPTH) return undefined;
  const source = schema as Schema;
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(source)) {
    if (REFINEMENTS.has(keyword)) continue;
    if (KEPT.has(keyword)) out[keyword] = value;
    else if (keyword === 'items') {
      const items = strictSchema(value, depth + 1);
      if (items === undefined) return undefined;
      out.items = items;
    } else if (keyword === 'anyOf') {
      if (!Array.isArray(value) || value.length === 0) return undefined;
      const branches = value.map((branch) => strictSchema(branch, depth + 1));
      if (branches.some((branch) => branch === undefined)) return undefined;
      out.anyOf = branches;
    } else if (keyword !== 'properties' && keyword !== 'required' && keyword !== 'additionalProperties') return undefined;
  }
  const isObject = source.type === 'object' || source.properties !== undefined;
  if (isObject) return strictObject(source, out, depth);
  if (source.type === 'array' && out.items === undefined) return undefined;
  return out.type === undefined && out.enum === undefined && out.const === undefined && out.anyOf === undefined ? undefined : out;
}

function strictObject(source: Schema, out: Record<string, unknown>, depth: number): Schema | undefined {
  const { properties, additionalProperties } = source;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined;
  if (additionalProperties !== undefined && additionalProperties !== false) return undefined;
  const required = new Set(Array.isArray(source.required) ? source.required : []);
  const converted: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties as Schema)) {
    const strict = strictSchema(property, depth + 1);
    if (strict === undefined) return undefined;
    converted[name] = required.has(name) ? strict : nullable(strict);
  }
  return { ...out, type: 'object', properties: converted, required: Object.keys(converted), additionalProperties: false };
}

/** `schema` that also takes null: how strict mode says a property may be left out. */
export function nullable(schema: Schema): Schema {
  if (admitsNull(schema)) return schema;
  const { type, enum: values } = schema;
  if (typeof type === 'string' && values === undefined) return { ...schema, type: [type, 'null'] };
  if (Array.isArray(type) && values === undefined) return { ...schema, type: [...(type as unknown[]), 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/** Whether a value of `schema` may be null (as far as its `type`, `enum`, `const` and `anyOf` say). */
export function admitsNull(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return schema === true;
  const { type, enum: values, anyOf } = schema as Schema;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  if (Array.isArray(values) && values.includes(null)) return true;
  if ((schema as Schema).const === null) return true;
  return Array.isArray(anyOf) && anyOf.some(admitsNull);
}

/**
 * `value` with the nulls a strict answer put for the properties `original` leaves optional taken
 * out again (where `original` does not take null itself), through nested objects and arrays.
 *
 * @example
 * ```ts
 * withoutStrictNulls({ q: 'x', n: null }, { type: 'object', properties: { q: {}, n: { type: 'integer' } }, required: ['q'] }); // { q: 'x' }
 * ```
 */
export function withoutStrictNulls(value: unknown, original: unknown): unknown {
  if (typeof original !== 'object' || original === null || typeof value !== 'object' || value === null) return value;
  const schema = original as Schema;
  if (Array.isArray(value)) return value.map((item) => withoutStrictNulls(item, schema.items));
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return value;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    const property = (properties as Schema)[name];
    if (item === null && !required.has(name) && !admitsNull(property)) continue;
    out[name] = withoutStrictNulls(item, property);
  }
  return out;
}
