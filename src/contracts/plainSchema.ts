import type { ErrorObject } from 'ajv';

// The JSON Schemas users write for a tool's input are nearly always plain: an object with typed
// properties, `required`, perhaps an enum, a pattern or a bound. Loading ajv and compiling its
// meta-schema to check one such schema cost a short `redflow run` about 90 ms, more than all of the
// rest of the run. This interpreter checks exactly that subset with ajv's own verdicts (same
// keyword order with `allErrors: false`, same first error); a schema using anything else (`$ref`,
// `anyOf`, boolean schemas, an unknown keyword, a malformed value) is left to ajv, which also
// explains an invalid schema. test/contracts/plainSchema.spec.ts compares both on random schemas.

/**
 * Checks a value and returns ajv's first error for it, or undefined when it matches.
 *
 * @example
 * ```ts
 * const check: PlainCheck | undefined = compilePlainSchema({ type: 'string', maxLength: 3 });
 * check?.('abcd')?.message; // 'must NOT have more than 3 characters'
 * ```
 */
export type PlainCheck = (value: unknown) => ErrorObject | undefined;

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'default', 'examples', 'format']);

/** Keywords by ajv's groups, in the order ajv's draft-07 vocabularies add them (which decides the first error). */
const NUMBER_KEYWORDS = ['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum'] as const;
const STRING_KEYWORDS = ['maxLength', 'minLength', 'pattern'] as const;
const ARRAY_KEYWORDS = ['maxItems', 'minItems', 'items'] as const;
const OBJECT_KEYWORDS = ['required', 'additionalProperties', 'properties'] as const;
// `format` belongs to the number and string groups too: with formats not validated it checks
// nothing, but it still moves the type check after const and enum.
const GROUPS: Readonly<Record<string, readonly string[]>> = {
  number: [...NUMBER_KEYWORDS, 'format'],
  string: [...STRING_KEYWORDS, 'format'],
  array: ARRAY_KEYWORDS,
  object: OBJECT_KEYWORDS,
};
const KNOWN = new Set<string>(['type', 'const', 'enum', ...NUMBER_KEYWORDS, ...STRING_KEYWORDS, ...ARRAY_KEYWORDS, ...OBJECT_KEYWORDS, ...ANNOTATIONS]);

const LIMIT_WORDS: Readonly<Record<string, string>> = { maximum: '<=', minimum: '>=', exclusiveMaximum: '<', exclusiveMinimum: '>' };

type Schema = Readonly<Record<string, unknown>>;

/**
 * Compiles a JSON Schema of the plain subset into a check with ajv's verdicts, or returns
 * undefined when the schema uses anything outside it (then ajv must compile it).
 *
 * @example
 * ```ts
 * const check = compilePlainSchema({ type: 'object', required: ['city'] });
 * check?.({}); // { instancePath: '', keyword: 'required', message: "must have required property 'city'", … }
 * ```
 */
export function compilePlainSchema(schema: unknown): PlainCheck | undefined {
  const patterns = new Map<string, RegExp>();
  if (!isPlain(schema, patterns)) return undefined;
  return (value) => firstError(schema, value, '', patterns);
}

function isRecord(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** Whether every keyword of the schema (and of its subschemas) is in the subset and well formed. */
function isPlain(schema: unknown, patterns: Map<string, RegExp>): schema is Schema {
  if (!isRecord(schema)) return false;
  for (const [keyword, value] of Object.entries(schema)) {
    if (!KNOWN.has(keyword) || !isWellFormed(keyword, value, patterns)) return false;
  }
  return true;
}

function isWellFormed(keyword: string, value: unknown, patterns: Map<string, RegExp>): boolean {
  switch (keyword) {
    case 'type': {
      const types = Array.isArray(value) ? value : [value];
      return types.length > 0 && types.every((type) => typeof type === 'string' && TYPES.has(type)) && new Set(types).size === types.length;
    }
    case 'const':
    case 'default':
      return true;
    case 'enum':
      // The meta-schema wants distinct items.
      return Array.isArray(value) && value.length > 0 && value.every((item, index) => value.findIndex((other) => jsonEqual(item, other)) === index);
    case 'examples':
      return Array.isArray(value);
    case 'title':
    case 'description':
    case '$comment':
    case 'format':
      return typeof value === 'string';
    case 'maximum':
    case 'minimum':
    case 'exclusiveMaximum':
    case 'exclusiveMinimum':
      return typeof value === 'number' && Number.isFinite(value);
    case 'maxLength':
    case 'minLength':
    case 'maxItems':
    case 'minItems':
      return isCount(value);
    case 'pattern':
      return typeof value === 'string' && compilesAsPattern(value, patterns);
    case 'required':
      return Array.isArray(value) && value.every((name) => typeof name === 'string') && new Set(value).size === value.length;
    case 'additionalProperties':
      return typeof value === 'boolean' || isPlain(value, patterns);
    case 'items':
      return isPlain(value, patterns);
    case 'properties':
      return isRecord(value) && Object.values(value).every((property) => isPlain(property, patterns));
    default:
      return false;
  }
}

/** ajv makes a `pattern` a unicode RegExp; one that does not compile is ajv's to report. */
function compilesAsPattern(pattern: string, patterns: Map<string, RegExp>): boolean {
  try {
    patterns.set(pattern, new RegExp(pattern, 'u'));
    return true;
  } catch {
    return false;
  }
}

/** ajv's type checks (`strictNumbers` off, as for user schemas). */
function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case 'object':
      return isRecord(value);
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    case 'integer':
      return typeof value === 'number' && !(value % 1) && !Number.isNaN(value);
    default:
      return typeof value === type;
  }
}

function error(instancePath: string, keyword: string, message: string, params: Record<string, unknown> = {}): ErrorObject {
  return { instancePath, schemaPath: `#/${keyword}`, keyword, message, params };
}

function firstError(schema: Schema, value: unknown, path: string, patterns: ReadonlyMap<string, RegExp>): ErrorObject | undefined {
  const types = schema.type === undefined ? [] : ([] as string[]).concat(schema.type as string | string[]);
  const usesGroup = (type: string) => GROUPS[type]?.some((keyword) => schema[keyword] !== undefined) ?? false;
  // ajv checks the type first unless it is a single type whose own keywords the schema uses: then
  // the type is checked where those keywords are, after const and enum.
  const typeFirst = types.length > 0 && !(types.length === 1 && usesGroup(types[0]!));
  const typeError = () => error(path, 'type', `must be ${types.join(',')}`, { type: schema.type });
  if (typeFirst && !types.some((type) => hasType(type, value))) return typeError();
  if (schema.const !== undefined && !jsonEqual(value, schema.const)) return error(path, 'const', 'must be equal to constant', { allowedValue: schema.const });
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => jsonEqual(value, allowed))) {
    return error(path, 'enum', 'must be equal to one of the allowed values', { allowedValues: schema.enum });
  }
  for (const group of ['number', 'string', 'array', 'object']) {
    if (!usesGroup(group)) continue;
    if (hasType(group, value)) {
      const found = groupError(group, schema, value, path, patterns);
      if (found) return found;
    } else if (!typeFirst && types[0] === group) {
      return typeError();
    }
  }
  return undefined;
}

function groupError(group: string, schema: Schema, value: unknown, path: string, patterns: ReadonlyMap<string, RegExp>): ErrorObject | undefined {
  switch (group) {
    case 'number':
      return numberError(schema, value as number, path);
    case 'string':
      return stringError(schema, value as string, path, patterns);
    case 'array':
      return arrayError(schema, value as unknown[], path, patterns);
    default:
      return objectError(schema, value as Schema, path, patterns);
  }
}

function numberError(schema: Schema, value: number, path: string): ErrorObject | undefined {
  for (const keyword of NUMBER_KEYWORDS) {
    const limit = schema[keyword] as number | undefined;
    if (limit === undefined) continue;
    const ok = keyword === 'maximum' ? value <= limit : keyword === 'minimum' ? value >= limit : keyword === 'exclusiveMaximum' ? value < limit : value > limit;
    if (!ok) return error(path, keyword, `must be ${LIMIT_WORDS[keyword]} ${limit}`, { comparison: LIMIT_WORDS[keyword], limit });
  }
  return undefined;
}

function stringError(schema: Schema, value: string, path: string, patterns: ReadonlyMap<string, RegExp>): ErrorObject | undefined {
  // ajv counts characters as code points, not UTF-16 units.
  const length = [...value].length;
  const { maxLength, minLength, pattern } = schema as { maxLength?: number; minLength?: number; pattern?: string };
  if (maxLength !== undefined && length > maxLength) return error(path, 'maxLength', `must NOT have more than ${maxLength} characters`, { limit: maxLength });
  if (minLength !== undefined && length < minLength) return error(path, 'minLength', `must NOT have fewer than ${minLength} characters`, { limit: minLength });
  if (pattern !== undefined && !patterns.get(pattern)!.test(value)) return error(path, 'pattern', `must match pattern "${pattern}"`, { pattern });
  return undefined;
}

function arrayError(schema: Schema, value: readonly unknown[], path: string, patterns: ReadonlyMap<string, RegExp>): ErrorObject | undefined {
  const { maxItems, minItems, items } = schema as { maxItems?: number; minItems?: number; items?: Schema };
  if (maxItems !== undefined && value.length > maxItems) return error(path, 'maxItems', `must NOT have more than ${maxItems} items`, { limit: maxItems });
  if (minItems !== undefined && value.length < minItems) return error(path, 'minItems', `must NOT have fewer than ${minItems} items`, { limit: minItems });
  if (items === undefined) return undefined;
  for (const [index, item] of value.entries()) {
    const found = firstError(items, item, `${path}/${index}`, patterns);
    if (found) return found;
  }
  return undefined;
}

function objectError(schema: Schema, value: Schema, path: string, patterns: ReadonlyMap<string, RegExp>): ErrorObject | undefined {
  const { required, additionalProperties, properties = {} } = schema as {
    required?: readonly string[];
    additionalProperties?: boolean | Schema;
    properties?: Readonly<Record<string, Schema>>;
  };
  // ajv looks properties up as `data[name]`, so it sees inherited ones too.
  const missing = required?.find((name) => value[name] === undefined);
  if (missing !== undefined) return error(path, 'required', `must have required property '${missing}'`, { missingProperty: missing });
  if (additionalProperties !== undefined && additionalProperties !== true) {
    for (const name in value) {
      if (Object.hasOwn(properties, name)) continue;
      if (additionalProperties === false) return error(path, 'additionalProperties', 'must NOT have additional properties', { additionalProperty: name });
      const found = firstError(additionalProperties, value[name], `${path}/${pointerToken(name)}`, patterns);
      if (found) return found;
    }
  }
  for (const [name, property] of Object.entries(properties)) {
    if (value[name] === undefined) continue;
    const found = firstError(property, value[name], `${path}/${pointerToken(name)}`, patterns);
    if (found) return found;
  }
  return undefined;
}

/** A property name as a JSON Pointer token, as ajv writes `instancePath`. */
const pointerToken = (name: string) => name.replaceAll('~', '~0').replaceAll('/', '~1');

/** Deep equality of JSON values (ajv's `const` and `enum`). */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, index) => jsonEqual(item, (b as unknown[])[index]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual((a as Schema)[key], (b as Schema)[key]));
}
