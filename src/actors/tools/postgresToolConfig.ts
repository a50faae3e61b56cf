import { ErrorCode, RedflowError } from '../../errors.js';
import type { ToolPostgresConfig } from '../../contracts/schema-types.js';
import { IDEMPOTENCY_KEY_PARAMETER, parseSqlParameters, undeclaredParameters, type ParsedSql } from './sqlParameters.js';

// A `tool.postgres` node's settings, checked once when the tool is made, and the values a call binds.

/** Whole-call timeout of a PostgreSQL tool (and its `statement_timeout`) when `timeoutMs` is not set. */
export const DEFAULT_POSTGRES_TOOL_TIMEOUT_MS = 5_000;

/** Rows a PostgreSQL tool returns at most when `maxRows` is not set. */
export const DEFAULT_POSTGRES_TOOL_MAX_ROWS = 100;

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_ROWS_LIMIT = 10_000;

/** A PostgreSQL tool's checked settings. */
export interface Settings {
  readonly sql: ParsedSql;
  readonly readOnly: boolean;
  readonly maxRows: number;
  readonly timeoutMs: number;
  /** Fetch through a cursor (at most maxRows + 1 rows) rather than read the whole result. */
  readonly cursor: boolean;
}

function configError(message: string, path?: string, hint?: string): RedflowError {
  return new RedflowError({ code: ErrorCode.TOOL_CONFIG_INVALID, message, path, hint });
}

/**
 * A `tool.postgres` node's settings, checked: name, query and its parameters, input schema, limits.
 * Throws `TOOL_CONFIG_INVALID` naming the field at fault.
 *
 * @example
 * ```ts
 * const settings = checkConfig({ name: 'orders', query: 'select * from orders where id = :id', inputSchema });
 * settings.sql.parameters; // ['id']
 * ```
 */
export function checkConfig(config: ToolPostgresConfig & { name: string }): Settings {
  const label = `postgres tool '${String(config.name)}'`;
  if (typeof config.name !== 'string' || !TOOL_NAME.test(config.name)) {
    throw configError(`${label}: name must be 1-64 letters, digits, '_' or '-'`, '/name');
  }
  if (typeof config.query !== 'string' || config.query.trim() === '') {
    throw configError(`${label}: query must be a non-empty SQL statement`, '/query');
  }
  const parsed = parseSqlParameters(config.query);
  if (!parsed.ok) {
    throw configError(`${label}: query: ${parsed.message} (at character ${parsed.index + 1})`, '/query');
  }
  const schema: unknown = config.inputSchema;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw configError(
      `${label}: inputSchema is required: it types the query's parameters`,
      '/inputSchema',
      'add "inputSchema": { "type": "object", "required": [...], "properties": { ... } } naming each :parameter',
    );
  }
  const properties = (schema as { properties?: unknown }).properties;
  if (typeof properties === 'object' && properties !== null && Object.hasOwn(properties, IDEMPOTENCY_KEY_PARAMETER)) {
    throw configError(
      `${label}: inputSchema declares "${IDEMPOTENCY_KEY_PARAMETER}", which the tool binds to the call's idempotency key`,
      `/inputSchema/properties/${IDEMPOTENCY_KEY_PARAMETER}`,
      `remove it from inputSchema: :${IDEMPOTENCY_KEY_PARAMETER} is filled by each call, not by the model`,
    );
  }
  const undeclared = undeclaredParameters(parsed.sql.parameters, schema);
  if (undeclared.length > 0) {
    throw configError(
      `${label}: inputSchema does not declare the query parameter${undeclared.length === 1 ? '' : 's'} ${undeclared.map((n) => `:${n}`).join(', ')}`,
      '/inputSchema',
      'add each parameter to inputSchema.properties (and to "required" unless it may be missing)',
    );
  }
  const maxRows = config.maxRows ?? DEFAULT_POSTGRES_TOOL_MAX_ROWS;
  if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > MAX_ROWS_LIMIT) {
    throw configError(`${label}: maxRows must be an integer from 1 to ${MAX_ROWS_LIMIT}`, '/maxRows');
  }
  const timeoutMs = config.timeoutMs ?? DEFAULT_POSTGRES_TOOL_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw configError(`${label}: timeoutMs must be a positive number`, '/timeoutMs');
  }
  if (config.connectionStringEnv !== undefined && !ENV_NAME.test(config.connectionStringEnv)) {
    throw configError(`${label}: connectionStringEnv must be an environment variable name`, '/connectionStringEnv');
  }
  const readOnly = config.readOnly ?? true;
  const keyword = parsed.sql.keyword;
  // DECLARE takes a SELECT or VALUES only; a WITH may hold an INSERT, which only a read-only
  // transaction would refuse anyway.
  const cursor = keyword === 'select' || keyword === 'values' || keyword === 'table' || (keyword === 'with' && readOnly);
  return { sql: parsed.sql, readOnly, maxRows, timeoutMs, cursor };
}

/**
 * The values of the parameters, in `$n` order, from the input (and the call's idempotency key).
 * A missing field fails with `TOOL_INPUT_INVALID`.
 *
 * @example
 * ```ts
 * bindValues(['id', 'idempotency_key'], { id: 'A-1' }, 'trace:1', label); // ['A-1', 'trace:1']
 * ```
 */
export function bindValues(parameters: readonly string[], input: Record<string, unknown>, idempotencyKey: string, label: string): unknown[] {
  return parameters.map((name) => {
    if (name === IDEMPOTENCY_KEY_PARAMETER) return idempotencyKey;
    const value = Object.hasOwn(input, name) ? input[name] : undefined;
    if (value === undefined) {
      throw new RedflowError({
        code: ErrorCode.TOOL_INPUT_INVALID,
        message: `${label}: input field '${name}' is needed by the query (:${name}) but is missing`,
        path: `/${name}`,
      });
    }
    return value;
  });
}

