// Types only: the driver itself is an optional peer dependency, loaded at a tool's first call.
// No exported declaration may name them (see PostgresPool): consumers need not have @types/pg.
import type pg from 'pg';
import { loadPostgresDriver } from './postgresDriver.js';
import { startDeadline } from '../deadline.js';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { ToolPostgresConfig } from '../../contracts/schema-types.js';
import type { ToolContext, ToolDefinition } from '../tool.js';
import { IDEMPOTENCY_KEY_PARAMETER, parseSqlParameters, undeclaredParameters, type ParsedSql } from './sqlParameters.js';
import { registerSecret } from '../../secrets/secrets.js';
import { DEFAULT_POSTGRES_CONNECTION_STRING_ENV, noConnectionStringError } from './postgresConnectionEnv.js';

/** Whole-call timeout of a PostgreSQL tool (and its `statement_timeout`) when `timeoutMs` is not set. */
export const DEFAULT_POSTGRES_TOOL_TIMEOUT_MS = 5_000;

/** Rows a PostgreSQL tool returns at most when `maxRows` is not set. */
export const DEFAULT_POSTGRES_TOOL_MAX_ROWS = 100;

export { DEFAULT_POSTGRES_CONNECTION_STRING_ENV } from './postgresConnectionEnv.js';

/** Connections a PostgreSQL tool's own pool opens at most. */
export const POSTGRES_TOOL_POOL_SIZE = 5;

/** What a PostgreSQL tool returns to the model. Every value is plain JSON. */
export interface PostgresToolOutput {
  /**
   * At most `maxRows` rows, one object per row keyed by column name (a later column wins over an
   * earlier one of the same name). Values: `int2`/`int4`/`float` as numbers (NaN and ±Infinity as
   * strings), `int8`/`numeric`/`money` as strings, `timestamptz` as ISO strings in UTC
   * (millisecond precision), `timestamp` as ISO strings without offset (`2024-05-01T10:00:00`),
   * `date` as `YYYY-MM-DD`, `interval` as ISO durations, `bytea` as base64, `json`/`jsonb`
   * parsed, arrays as arrays, SQL NULL as `null`, anything else as PostgreSQL's text.
   */
  readonly rows: Record<string, unknown>[];
  /**
   * The number of rows in `rows`; for a statement that returns no rows (an UPDATE without
   * RETURNING), the number of rows it affected.
   */
  readonly rowCount: number;
  /** True when the query had more than `maxRows` rows (the rest were not returned). */
  readonly truncated: boolean;
  /** The column names, in order. */
  readonly fields: string[];
}

/**
 * A node-postgres `Pool` (`new pg.Pool(…)` from the `pg` package) as {@link createPostgresTool}
 * takes it. Declared here, with only what the tool's callers see, so that Redflow's types do not
 * need `@types/pg`; the tool uses the pool as the `pg.Pool` it is.
 */
export interface PostgresPool {
  /** The pool's connection settings (`pg.PoolConfig`): they open the connection that cancels an interrupted query. */
  readonly options: object;
  connect(): Promise<unknown>;
  end(): Promise<void>;
}

/** Options of {@link createPostgresTool}. */
export interface PostgresToolOptions {
  /**
   * Use this pool (a `pg.Pool`) instead of making one from the connection string. The caller owns
   * it: the tool's `close()` does not end it. Its `options` are used to open the connection that
   * cancels an interrupted query.
   */
  readonly pool?: PostgresPool;
  /** Where `connectionStringEnv` is looked up (default `process.env`), at the first call. */
  readonly env?: NodeJS.ProcessEnv;
}

/** A PostgreSQL tool: a {@link ToolDefinition} that holds a connection pool until `close()`. */
export interface PostgresTool extends ToolDefinition<Record<string, unknown>, PostgresToolOutput> {
  execute(input: Record<string, unknown>, context: ToolContext): Promise<PostgresToolOutput>;
  /**
   * Waits for interrupted calls to be cleaned up, then ends the tool's own pool. Later calls fail
   * with `TOOL_FAILED`. Safe to call more than once.
   */
  close(): Promise<void>;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_ROWS_LIMIT = 10_000;
const CURSOR = 'redflow_rows';
/** Time allowed to ROLLBACK after a failure, or to cancel an interrupted query, before giving up. */
const CLEANUP_TIMEOUT_MS = 2_000;

/**
 * Builds a `tool.postgres` node's tool: each call runs the node's one SQL statement with the
 * model's input bound to its named parameters, in a transaction of its own.
 *
 * - **Parameters**: `:name` in `query` is the input field `name`, sent as a bind parameter (`$n`),
 *   never written into the SQL. See {@link parseSqlParameters} for what counts as a parameter
 *   (not inside strings, quoted identifiers, comments, or `::type` casts). A parameter whose field
 *   is missing (or `undefined`) fails the call with `TOOL_INPUT_INVALID`; `null` is SQL NULL.
 * - **Input schema**: required, and every parameter must be one of its `properties`, so the model
 *   is told what to send and its input is checked before a query runs (`TOOL_CONFIG_INVALID`
 *   otherwise; `validateFlow` reports the same as `NODE_CONFIG_INVALID`).
 * - **Idempotency**: `:idempotency_key` is bound to the call's idempotency key
 *   (`<traceId>:<iteration>`, the same when the call is re-sent after a crash), never to the input
 *   (the schema must not declare it). A write that stores it under a unique constraint in the same
 *   statement, `insert … values (:idempotency_key, …) on conflict do nothing`, commits once
 *   however often the call is made: the key and the effect share the transaction.
 * - **Read-only** (`readOnly`, default true): the statement runs in `BEGIN READ ONLY`, so
 *   PostgreSQL refuses writes and DDL (`TOOL_FAILED` with its message). This guards against
 *   mistakes, not attacks: give the tool a database role that can only read for that.
 *   `readOnly: false` runs in a read-write transaction, committed when the statement succeeds.
 * - **Rows**: a SELECT, VALUES, TABLE (or, when read-only, WITH) statement runs through a cursor
 *   from which `maxRows + 1` rows (default 100 + 1) are fetched; other statements (`INSERT …
 *   RETURNING`, `SHOW`, …) are read whole and cut. More than `maxRows` rows → `truncated: true`.
 * - **Time** (`timeoutMs`, default 5 s) covers the whole call: the transaction's
 *   `statement_timeout` is set (`set_config(…, true)`, i.e. SET LOCAL) to what is left of it, and a
 *   client-side deadline ends the wait even when the server or network does not answer →
 *   `TOOL_TIMEOUT`. The run's signal ends it too → `RUN_ABORTED`.
 * - **Cancellation**: node-postgres cannot cancel a query through a signal, so on the deadline or
 *   an abort the call stops waiting at once, and in the background a short-lived second connection
 *   runs `pg_cancel_backend(pid)` for the query's backend, then the interrupted connection is
 *   destroyed rather than returned to the pool (it is inside a transaction). Destroying alone is
 *   not enough: PostgreSQL notices a closed socket only when it next writes to it, so a
 *   `pg_sleep` or a long scan would go on until its `statement_timeout`, which stays as the
 *   backstop should the cancel fail. (A write interrupted while its COMMIT is under way may
 *   still have been committed.)
 * - **Connection**: `connectionString`, else the environment variable `connectionStringEnv`
 *   (default `DATABASE_URL`) read at the first call; neither → `TOOL_CONFIG_INVALID`. The pool
 *   (at most {@link POSTGRES_TOOL_POOL_SIZE} connections) is made at the first call and ended by
 *   `close()`. Failing to connect → `TOOL_FAILED` with a hint. Messages never contain the
 *   connection string or its password, and both are registered as secrets (redacted from the log).
 *
 * Configuration problems found here (bad name, query, input schema, limits) throw
 * `TOOL_CONFIG_INVALID`. The output is a {@link PostgresToolOutput}.
 *
 * @example
 * ```ts
 * const orders = createPostgresTool({
 *   name: 'order_status',
 *   query: 'select id, status, updated_at from orders where id = :orderId',
 *   inputSchema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } },
 * });
 * await orders.execute({ orderId: 'A-1001' }, context);
 * // → { rows: [{ id: 'A-1001', status: 'shipped', updated_at: '2024-05-01T10:00:00.000Z' }],
 * //     rowCount: 1, truncated: false, fields: ['id', 'status', 'updated_at'] }
 * await orders.close();
 * ```
 */
export function createPostgresTool(config: ToolPostgresConfig & { name: string }, options: PostgresToolOptions = {}): PostgresTool {
  const settings = checkConfig(config);
  const label = `postgres tool '${config.name}'`;
  const pending = new Set<Promise<void>>();
  let connection: Connection | undefined;
  let closing: Promise<void> | undefined;

  const track = (work: Promise<unknown>): void => {
    const done = work.then(noop, noop);
    pending.add(done);
    void done.then(() => pending.delete(done));
  };

  const connect = async (): Promise<Connection> => {
    if (connection) return connection;
    const driver = await loadPostgresDriver();
    if (connection) return connection;
    if (options.pool) {
      const given = options.pool.options as pg.ClientConfig;
      return (connection = {
        driver,
        pool: options.pool as pg.Pool,
        clientConfig: given,
        secrets: registered(secretsOf(given)),
        source: 'the pool given to the tool',
        owned: false,
      });
    }
    const envName = config.connectionStringEnv ?? DEFAULT_POSTGRES_CONNECTION_STRING_ENV;
    const connectionString = config.connectionString ?? (options.env ?? process.env)[envName];
    const source = config.connectionString !== undefined ? 'the node\'s "connectionString"' : `the environment variable ${envName}`;
    if (connectionString === undefined || connectionString === '') {
      throw noConnectionStringError(label, envName);
    }
    if (!isConnectionUrl(connectionString)) {
      // Not repeated: it may hold a password.
      throw new RedflowError({
        code: ErrorCode.TOOL_CONFIG_INVALID,
        message: `${label}: the connection string in ${source} is not a postgres:// URL`,
        hint: 'use the form postgres://user:password@host:5432/database',
        path: config.connectionString !== undefined ? '/connectionString' : '/connectionStringEnv',
      });
    }
    const clientConfig: pg.ClientConfig = { connectionString, application_name: `redflow:${config.name}` };
    const pool = new driver.Pool({
      ...clientConfig,
      max: POSTGRES_TOOL_POOL_SIZE,
      connectionTimeoutMillis: settings.timeoutMs,
      idleTimeoutMillis: 10_000,
      allowExitOnIdle: true,
    });
    // An idle connection that breaks (a server restart) is dropped by the pool; without a
    // listener its 'error' event would end the process.
    pool.on('error', noop);
    return (connection = { driver, pool, clientConfig, secrets: registered(secretsOf(clientConfig)), source, owned: true });
  };

  return {
    name: config.name,
    description: config.description ?? `Runs an SQL query on PostgreSQL: ${settings.sql.text.replace(/\s+/g, ' ').trim().slice(0, 200)}`,
    inputSchema: config.inputSchema,
    // A READ ONLY transaction changes nothing: running it again is harmless.
    idempotent: settings.readOnly,
    async execute(input, context) {
      if (closing) {
        throw new RedflowError({ code: ErrorCode.TOOL_FAILED, message: `${label}: the tool is closed` });
      }
      const values = bindValues(settings.sql.parameters, input, context.idempotencyKey, label);
      if (context.signal.aborted) throw abortedError(label);
      return runQuery(await connect(), settings, values, context, label, track);
    },
    close() {
      closing ??= (async () => {
        // Interrupted calls still hold a connection until their cancel is done.
        while (pending.size > 0) await Promise.all([...pending]);
        if (connection?.owned) await connection.pool.end().catch(noop);
      })();
      return closing;
    },
  };
}

interface Settings {
  readonly sql: ParsedSql;
  readonly readOnly: boolean;
  readonly maxRows: number;
  readonly timeoutMs: number;
  /** Fetch through a cursor (at most maxRows + 1 rows) rather than read the whole result. */
  readonly cursor: boolean;
}

/** The pool of a tool and what its messages must never show. */
interface Connection {
  /** The `pg` package, loaded. */
  readonly driver: typeof pg;
  readonly pool: pg.Pool;
  /** How to open the extra connection that cancels an interrupted query. */
  readonly clientConfig: pg.ClientConfig;
  /** The connection string and password, cut from every message. */
  readonly secrets: readonly string[];
  /** Where the connection string came from, for hints (never the value). */
  readonly source: string;
  /** True when the tool made the pool (and so ends it). */
  readonly owned: boolean;
}

function configError(message: string, path?: string, hint?: string): RedflowError {
  return new RedflowError({ code: ErrorCode.TOOL_CONFIG_INVALID, message, path, hint });
}

function checkConfig(config: ToolPostgresConfig & { name: string }): Settings {
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

/** The values of the parameters, in `$n` order, from the input (and the call's idempotency key). */
function bindValues(parameters: readonly string[], input: Record<string, unknown>, idempotencyKey: string, label: string): unknown[] {
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

/** Rejects a guarded wait when the call is interrupted (deadline or abort). */
const INTERRUPTED = Symbol('interrupted');

/** One call: connect, BEGIN, set the timeout, run (through a cursor or not), COMMIT. */
async function runQuery(
  connection: Connection,
  settings: Settings,
  values: unknown[],
  context: ToolContext,
  label: string,
  track: (work: Promise<unknown>) => void,
): Promise<PostgresToolOutput> {
  const started = Date.now();
  const deadline = startDeadline(context.signal, settings.timeoutMs);
  const interrupted = new Promise<never>((_, reject) => {
    const stop = (): void => reject(INTERRUPTED);
    if (deadline.signal.aborted) stop();
    else deadline.signal.addEventListener('abort', stop, { once: true });
  });
  interrupted.catch(noop);
  /** Waits for `work` unless the call is interrupted first; `work`'s late failure is ignored. */
  const guard = <T>(work: Promise<T>): Promise<T> => {
    work.catch(noop);
    return Promise.race([work, interrupted]);
  };

  const connecting = connection.pool.connect();
  let client: pg.PoolClient | undefined;
  let pid: number | undefined;
  try {
    try {
      client = await guard(connecting);
    } catch (error) {
      if (error === INTERRUPTED) throw error;
      throw connectError(error, connection, label);
    }
    // While checked out, a broken connection emits 'error' on the client; the waiting query fails too.
    client.on('error', noop);
    await guard(client.query(settings.readOnly ? 'BEGIN READ ONLY' : 'BEGIN'));
    const left = Math.max(1, Math.ceil(settings.timeoutMs - (Date.now() - started)));
    const setup = await guard(
      client.query<[number, string]>({
        text: "select pg_backend_pid(), set_config('statement_timeout', $1, true)",
        values: [String(left)],
        rowMode: 'array',
      }),
    );
    pid = setup.rows[0]?.[0];
    let result: pg.QueryArrayResult;
    if (settings.cursor) {
      await guard(client.query(extended({ text: `DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${settings.sql.text}`, values })));
      result = await guard(
        client.query({ text: `FETCH FORWARD ${settings.maxRows + 1} FROM ${CURSOR}`, rowMode: 'array', types: jsonSafeTypes(connection.driver) }),
      );
    } else {
      result = await guard(client.query(extended({ text: settings.sql.text, values, rowMode: 'array' as const, types: jsonSafeTypes(connection.driver) })));
    }
    const output = shape(result, settings.maxRows);
    await guard(client.query('COMMIT'));
    release(client);
    return output;
  } catch (error) {
    const wasInterrupted = error === INTERRUPTED;
    if (client !== undefined) {
      track(wasInterrupted ? abandon(client, pid, connection) : rollback(client));
    } else if (wasInterrupted) {
      // The connection may still arrive: it is clean, so it goes back to the pool.
      track(connecting.then((late) => late.release()));
    }
    if (deadline.signal.aborted) {
      if (!deadline.timedOut()) throw abortedError(label);
      throw timeoutError(label, settings.timeoutMs);
    }
    if (error instanceof RedflowError) throw error;
    throw queryError(error, connection, label, settings.timeoutMs);
  } finally {
    deadline.dispose();
  }
}

/** Sends a query with the extended protocol even without values, so it is exactly one statement. */
function extended<T extends pg.QueryConfig>(config: T): T {
  return Object.assign(config, { queryMode: 'extended' });
}

function release(client: pg.PoolClient, error?: Error): void {
  client.removeListener('error', noop);
  client.release(error);
}

/** After a failure: ROLLBACK and back to the pool, or destroyed if that does not work in time. */
async function rollback(client: pg.PoolClient): Promise<void> {
  try {
    await withTimeout(client.query('ROLLBACK'), CLEANUP_TIMEOUT_MS);
    release(client);
  } catch (error) {
    release(client, error instanceof Error ? error : new Error(String(error)));
  }
}

/** After an interruption: cancel the backend's query, then destroy the connection. */
async function abandon(client: pg.PoolClient, pid: number | undefined, connection: Connection): Promise<void> {
  try {
    if (pid !== undefined) await cancelBackend(pid, connection);
  } finally {
    release(client, new Error('interrupted'));
  }
}

/** `pg_cancel_backend(pid)` on a connection of its own (the pool may be full of stuck ones). Best effort. */
async function cancelBackend(pid: number, connection: Connection): Promise<void> {
  const canceller = new connection.driver.Client({ ...connection.clientConfig, connectionTimeoutMillis: CLEANUP_TIMEOUT_MS });
  canceller.on('error', noop);
  try {
    await withTimeout(
      canceller.connect().then(() => canceller.query('select pg_cancel_backend($1)', [pid])),
      CLEANUP_TIMEOUT_MS,
    );
  } catch {
    // The server's statement_timeout ends the query anyway.
  } finally {
    await canceller.end().catch(noop);
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  work.catch(noop);
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

function shape(result: pg.QueryArrayResult, maxRows: number): PostgresToolOutput {
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
 */
function jsonSafeTypes(driver: typeof pg): pg.CustomTypesConfig {
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


/** The connection string and the password in it (raw and decoded), to cut from messages. */
function secretsOf(config: pg.ClientConfig): string[] {
  const secrets: string[] = [];
  if (typeof config.password === 'string') secrets.push(config.password);
  const connectionString = config.connectionString;
  if (connectionString !== undefined) {
    secrets.push(connectionString);
    try {
      const password = new URL(connectionString).password;
      secrets.push(password);
      secrets.push(decodeURIComponent(password));
    } catch {
      // Not a URL (a socket path): no password in it.
    }
  }
  // Longest first, so a password inside the connection string does not leave the rest behind.
  return [...new Set(secrets.filter((secret) => secret !== ''))].sort((a, b) => b.length - a.length);
}

/** Makes `secrets` known to the process (so nothing it records shows them) and returns them. */
function registered(secrets: readonly string[]): readonly string[] {
  for (const secret of secrets) registerSecret(secret);
  return secrets;
}

/** What node-postgres can read: a postgres:// (or postgresql://, socket:) URL, or a socket path. */
function isConnectionUrl(connectionString: string): boolean {
  if (connectionString.startsWith('/')) return true;
  try {
    return ['postgres:', 'postgresql:', 'socket:'].includes(new URL(connectionString).protocol);
  } catch {
    return false;
  }
}

function redact(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => out.split(secret).join('***'), text);
}

/** A thrown value's text: node's AggregateError (several addresses refused) has an empty message. */
function errorText(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [...new Set(error.errors.map(errorText))].join('; ');
  }
  if (error instanceof Error) return error.message || String((error as { code?: unknown }).code ?? error.name);
  return String(error);
}

function sqlState(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function connectError(error: unknown, connection: Connection, label: string): RedflowError {
  const state = sqlState(error);
  const detail = redact(errorText(error), connection.secrets);
  // Refused, unreachable, timed out, "starting up": worth trying again. Wrong password or database: not.
  const retryable = state === undefined || state.startsWith('08') || state === '57P03';
  return new RedflowError(
    {
      code: ErrorCode.TOOL_FAILED,
      message: `${label}: cannot connect to PostgreSQL: ${detail}${state ? ` (SQLSTATE ${state})` : ''}`,
      hint: `check that PostgreSQL is running and reachable, and that ${connection.source} holds the right host, port, database, user and password`,
      retryable,
    },
    { cause: error },
  );
}

function queryError(error: unknown, connection: Connection, label: string, timeoutMs: number): RedflowError {
  const state = sqlState(error);
  if (state === '57014') return timeoutError(label, timeoutMs);
  const detail = redact(errorText(error), connection.secrets);
  // 0A000 "data-modifying statements in WITH": such a WITH is refused as a read-only cursor.
  const hint =
    state === '25006' || (state === '0A000' && detail.includes('data-modifying'))
      ? 'the tool runs in a READ ONLY transaction ("readOnly" is true by default); set "readOnly": false on the node if it must write'
      : undefined;
  const retryable = state === undefined || state === '40001' || state === '40P01' || state.startsWith('08') || state === '57P01';
  return new RedflowError(
    {
      code: ErrorCode.TOOL_FAILED,
      message: `${label}: the query failed: ${detail}${state ? ` (SQLSTATE ${state})` : ''}`,
      hint,
      retryable,
    },
    { cause: error },
  );
}

function timeoutError(label: string, timeoutMs: number): RedflowError {
  return new RedflowError({
    code: ErrorCode.TOOL_TIMEOUT,
    message: `${label}: no result within ${timeoutMs} ms`,
    hint: 'raise the node\'s "timeoutMs" or make the query cheaper (an index, a narrower WHERE)',
    retryable: true,
  });
}

function abortedError(label: string): RedflowError {
  return new RedflowError({ code: ErrorCode.RUN_ABORTED, message: `${label}: aborted because the run was aborted` });
}

function noop(): void {}
