import type pg from 'pg';
import type { PostgresToolOutput } from './postgresToolOutput.js';

// What a query returns, as plain JSON for the model: rows keyed by column, dates kept as PostgreSQL wrote them.

/**
 * A query's result as the tool's output: at most `maxRows` rows as JSON objects.
 *
 * @example
 * ```ts
 * shape(await client.query({ text: 'select 1 as one', rowMode: 'array' }), 100);
 * // → { rows: [{ one: 1 }], rowCount: 1, truncated: false, fields: ['one'] }
 * ```
 */
export function shape(result: pg.QueryArrayResult, maxRows: number): PostgresToolOutput {
  const fields = result.fields.map((field) => field.name);
  const rows = result.rows
    .slice(0, maxRows)
    .map((row: unknown[]) => Object.fromEntries(fields.map((name, index) => [name, toJsonSafe(row[index])])));
  return {
    rows,
    rowCount: fields.length > 0 ? rows.length : (result.rowCount ?? 0),
    truncated: result.rows.length > maxRows,
    fields,
  };
}

/** A value as plain JSON data: see {@link PostgresToolOutput.rows}. */
function toJsonSafe(value: unknown): unknown {
  switch (typeof value) {
    case 'undefined':
      return null;
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return String(value);
  }
  if (value === null) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (Array.isArray(value)) return value.map(toJsonSafe);
  // An interval (node-postgres' PostgresInterval) as an ISO 8601 duration.
  const toIso = (value as { toISOString?: unknown }).toISOString;
  if (typeof toIso === 'function') return String(toIso.call(value));
  // fromEntries defines keys, so a jsonb key "__proto__" stays a plain key.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toJsonSafe(item)]));
}

const TEXT_ARRAY_OID = 1009;
const TIMESTAMP_OID = 1114;
const TIMESTAMP_ARRAY_OID = 1115;
const DATE_OID = 1082;
const DATE_ARRAY_OID = 1182;
const TIMESTAMPTZ_OID = 1184;
const TIMESTAMPTZ_ARRAY_OID = 1185;

type TextParser = (text: string) => unknown;

/** `timestamp` (no zone) as an ISO local time: `2024-05-01 10:00:00` → `2024-05-01T10:00:00`. */
function isoTimestamp(text: string): string {
  return /^\d{4,}-\d\d-\d\d \d/.test(text) && !text.endsWith(' BC') ? text.replace(' ', 'T') : text;
}

const keepText: TextParser = (text) => text;

/** {@link jsonSafeTypes}' answer, made once: there is one `pg` package. */
let jsonSafe: pg.CustomTypesConfig | undefined;

/**
 * node-postgres' parsers, except for dates and times: its `date` and `timestamp` parsers read the
 * value in the Node process's time zone, which would shift it; these keep PostgreSQL's value.
 *
 * @example
 * ```ts
 * await client.query({ text: 'select now()', types: jsonSafeTypes(driver) });
 * ```
 */
export function jsonSafeTypes(driver: typeof pg): pg.CustomTypesConfig {
  if (jsonSafe) return jsonSafe;
  /** node-postgres' own text parser of a type (its typings list only some OIDs). */
  const builtinParser = (oid: number): TextParser => (driver.types.getTypeParser as (oid: number) => TextParser)(oid);
  const parseTimestamptz = builtinParser(TIMESTAMPTZ_OID);
  /** `{a,NULL,"b c"}` → `['a', null, 'b c']` (nested for more dimensions). */
  const parseTextArray = builtinParser(TEXT_ARRAY_OID);
  /** `timestamptz` as an ISO string in UTC; `infinity` and the like stay as PostgreSQL writes them. */
  const isoTimestamptz = (text: string): string => {
    const parsed = parseTimestamptz(text);
    return parsed instanceof Date && !Number.isNaN(parsed.getTime()) ? parsed.toISOString() : text;
  };
  const arrayOf =
    (parse: TextParser): TextParser =>
    (text) => {
      const each = (item: unknown): unknown => (Array.isArray(item) ? item.map(each) : typeof item === 'string' ? parse(item) : item);
      return each(parseTextArray(text));
    };
  const own = new Map<number, TextParser>([
    [DATE_OID, keepText],
    [DATE_ARRAY_OID, arrayOf(keepText)],
    [TIMESTAMP_OID, isoTimestamp],
    [TIMESTAMP_ARRAY_OID, arrayOf(isoTimestamp)],
    [TIMESTAMPTZ_OID, isoTimestamptz],
    [TIMESTAMPTZ_ARRAY_OID, arrayOf(isoTimestamptz)],
  ]);
  return (jsonSafe = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
      const parser = format === 'binary' ? undefined : own.get(oid);
      return parser ?? driver.types.getTypeParser(oid, format);
    }) as pg.CustomTypesConfig['getTypeParser'],
  });
}
