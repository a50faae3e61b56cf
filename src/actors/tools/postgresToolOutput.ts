// Apart from postgresRows.ts, which names pg's types: the published declarations of the tool need
// nothing but @types/node, so the output's type must not sit in a file that imports `pg`.

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
