import type pg from 'pg';
import { importOptional } from '../../optionalDependency.js';

/**
 * The `pg` package, imported at the first call of the first PostgreSQL tool (and by
 * `buildTools` before a run that has one starts, so that a missing driver stops it early).
 * Kept apart from postgresTool.ts: its declaration names pg's types, which the tool's own
 * declarations must not.
 *
 * @throws RedflowError `DEPENDENCY_MISSING` (hint: `npm install pg`) when `pg` is not installed.
 *
 * @example
 * ```ts
 * const pg = await loadPostgresDriver();
 * const pool = new pg.Pool({ connectionString });
 * ```
 */
export async function loadPostgresDriver(): Promise<typeof pg> {
  const loaded = await importOptional('pg', 'a tool.postgres node', () => import('pg'));
  return loaded.default;
}
