/**
 * `redflow/postgres`: the `tool.postgres` node's tool as a library. Flows run from the main entry
 * point build it by themselves; this is for code that makes one by hand.
 *
 * It needs the `pg` package (an optional peer dependency: `npm install pg`), which it loads at the
 * tool's first call; without it that call fails with `DEPENDENCY_MISSING`.
 *
 * @example
 * ```ts
 * import { createPostgresTool } from 'redflow/postgres';
 *
 * const orders = createPostgresTool({
 *   name: 'order_status',
 *   query: 'select id, status from orders where id = :orderId',
 *   inputSchema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } },
 * });
 * ```
 *
 * @module
 */
export {
  createPostgresTool,
  DEFAULT_POSTGRES_TOOL_TIMEOUT_MS,
  DEFAULT_POSTGRES_TOOL_MAX_ROWS,
  DEFAULT_POSTGRES_CONNECTION_STRING_ENV,
  POSTGRES_TOOL_POOL_SIZE,
} from '../actors/tools/postgresTool.js';
export type { PostgresTool, PostgresToolOptions, PostgresToolOutput, PostgresPool } from '../actors/tools/postgresTool.js';
export { parseSqlParameters } from '../actors/tools/sqlParameters.js';
export type { ParsedSql, SqlParseResult } from '../actors/tools/sqlParameters.js';
