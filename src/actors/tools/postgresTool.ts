// Types only: the driver itself is an optional peer dependency, loaded at a tool's first call.
// No exported declaration may name them (see PostgresPool): consumers need not have @types/pg.
import type pg from 'pg';
import { loadPostgresDriver } from './postgresDriver.js';
import { abortedByRun, startDeadline } from '../deadline.js';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { ToolPostgresConfig } from '../../contracts/schema-types.js';
import type { ToolContext, ToolDefinition } from '../tool.js';
import { DEFAULT_POSTGRES_CONNECTION_STRING_ENV, noConnectionStringError } from './postgresConnectionEnv.js';
import { bindValues, checkConfig, type Settings } from './postgresToolConfig.js';
import { jsonSafeTypes, shape } from './postgresRows.js';
import type { PostgresToolOutput } from './postgresToolOutput.js';
import { connectError, isConnectionUrl, queryError, registered, secretsOf, timeoutError, type Connection } from './postgresFailures.js';

export type { PostgresToolOutput } from './postgresToolOutput.js';
export { DEFAULT_POSTGRES_TOOL_TIMEOUT_MS, DEFAULT_POSTGRES_TOOL_MAX_ROWS } from './postgresToolConfig.js';
export { DEFAULT_POSTGRES_CONNECTION_STRING_ENV } from './postgresConnectionEnv.js';

/** Connections a PostgreSQL tool's own pool opens at most. */
export const POSTGRES_TOOL_POOL_SIZE = 5;

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
      if (context.signal.aborted) throw abortedByRun(label);
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
      if (!deadline.timedOut()) throw abortedByRun(label);
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

function noop(): void {}
