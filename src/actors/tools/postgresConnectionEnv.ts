import { ErrorCode, RedflowError } from '../../errors.js';
import type { ToolPostgresConfig } from '../../contracts/schema-types.js';

/** The environment variable holding the connection string when `connectionStringEnv` is not set. */
export const DEFAULT_POSTGRES_CONNECTION_STRING_ENV = 'DATABASE_URL';

/**
 * The environment variable a `tool.postgres` node would take its connection string from when it
 * is missing there (unset or empty), or `undefined` when the tool has what it needs (its node's
 * own `connectionString`, or the variable set). Kept apart from the tool itself so checks that
 * must not load the PostgreSQL driver (validation, building a run) ask exactly what the tool asks.
 *
 * @example
 * ```ts
 * missingConnectionStringEnv({ query: 'select 1' }, {}); // 'DATABASE_URL'
 * ```
 */
export function missingConnectionStringEnv(
  config: Pick<ToolPostgresConfig, 'connectionString' | 'connectionStringEnv'>,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (config.connectionString !== undefined) return undefined;
  const envName = config.connectionStringEnv ?? DEFAULT_POSTGRES_CONNECTION_STRING_ENV;
  const value = env[envName];
  return value === undefined || value === '' ? envName : undefined;
}

/**
 * The `TOOL_CONFIG_INVALID` error of a PostgreSQL tool `label` (e.g. `postgres tool 'orders'`)
 * with no connection string: neither its node's nor the variable `envName`.
 */
export function noConnectionStringError(label: string, envName: string): RedflowError {
  return new RedflowError({
    code: ErrorCode.TOOL_CONFIG_INVALID,
    message: `${label}: no connection string: ${envName} is not set and the node has no "connectionString"`,
    hint: `set ${envName} to a connection string, e.g. postgres://user@localhost:5432/db, where the tool runs (the embedded run, or the tool worker)`,
    path: '/connectionStringEnv',
  });
}
