/**
 * Named parameters in the SQL of a `tool.postgres` node: `:name` in the text becomes `$1…$n`, so
 * the values travel separately from the SQL and are never interpolated into it.
 *
 * Pure code (no imports): `validateFlow` uses it to check a flow without loading the driver.
 */

/** A query with its named parameters turned into positional ones. */
export interface ParsedSql {
  /** The SQL with each `:name` replaced by `$n` and a trailing `;` removed. */
  readonly text: string;
  /** Parameter names in `$n` order (`parameters[0]` is `$1`); each name appears once. */
  readonly parameters: readonly string[];
  /** The statement's first keyword, lower case (`select`, `with`, `insert`, …), or `''`. */
  readonly keyword: string;
}

/** The result of {@link parseSqlParameters}: the parsed query, or what is wrong with it. */
export type SqlParseResult =
  | { readonly ok: true; readonly sql: ParsedSql }
  | { readonly ok: false; readonly message: string; readonly index: number };

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;
/** Characters that continue an identifier or a number: a `:` or `$` right after one is not special. */
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;
/** The opening of a dollar-quoted string, `$$` or `$tag$`, matched at `lastIndex`. */
const DOLLAR_TAG = /\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/y;

/**
 * Finds the `:name` parameters of one SQL statement and numbers them in order of first use.
 *
 * The syntax: a colon directly followed by a letter or `_` (then letters, digits, `_`) is a
 * parameter, unless the colon directly follows a letter, digit, `_` or `$` (so an array slice
 * `a[lo:hi]` is left alone; `a[lo : hi]` with spaces is too). Nothing is a parameter inside
 * `'…'` strings (with `''`, and `\'` in `E'…'` strings), `"…"` identifiers, `$tag$…$tag$`
 * strings, `-- …` and (nested) `/* … *\/` comments; `::type` casts are casts. The same name used
 * twice is one parameter.
 *
 * Refused (`ok: false`, with the index in `sql`): an unterminated string, identifier or comment,
 * positional `$1` parameters, and more than one statement (a single trailing `;` is fine).
 *
 * @example
 * ```ts
 * parseSqlParameters("select * from orders where id = :id and note <> ':x' and total::text = :id")
 * // → { ok: true, sql: { text: "select * from orders where id = $1 and note <> ':x' and total::text = $1",
 * //                      parameters: ['id'], keyword: 'select' } }
 * ```
 */
export function parseSqlParameters(sql: string): SqlParseResult {
  const parameters: string[] = [];
  let out = '';
  let copied = 0;
  let end: number | undefined;
  let i = 0;
  const fail = (message: string, index: number): SqlParseResult => ({ ok: false, message, index });
  const wordBefore = (index: number): boolean => index > 0 && WORD_PART.test(sql[index - 1]!);

  while (i < sql.length) {
    const ch = sql[i]!;
    const next = sql[i + 1];
    if (end !== undefined && ch !== ';' && !/\s/.test(ch) && !(ch === '-' && next === '-') && !(ch === '/' && next === '*')) {
      return fail('the query holds more than one statement; a tool runs exactly one', end);
    }
    if (ch === "'") {
      const escapes = (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !wordBefore(i - 1);
      const close = skipQuoted(sql, i, "'", escapes);
      if (close < 0) return fail('unterminated string literal', i);
      i = close;
    } else if (ch === '"') {
      const close = skipQuoted(sql, i, '"', false);
      if (close < 0) return fail('unterminated quoted identifier', i);
      i = close;
    } else if (ch === '-' && next === '-') {
      const newline = sql.indexOf('\n', i);
      i = newline < 0 ? sql.length : newline + 1;
    } else if (ch === '/' && next === '*') {
      const close = skipBlockComment(sql, i);
      if (close < 0) return fail('unterminated /* comment', i);
      i = close;
    } else if (ch === '$' && !wordBefore(i)) {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(sql)?.[0];
      if (tag !== undefined) {
        const close = sql.indexOf(tag, i + tag.length);
        if (close < 0) return fail(`unterminated ${tag} string`, i);
        i = close + tag.length;
      } else if (/[0-9]/.test(next ?? '')) {
        return fail('positional parameters ($1) are not allowed; use named ones (:name)', i);
      } else {
        i++;
      }
    } else if (ch === ':' && next === ':') {
      i += 2;
    } else if (ch === ':' && next !== undefined && NAME_START.test(next) && !wordBefore(i)) {
      let stop = i + 2;
      while (stop < sql.length && NAME_PART.test(sql[stop]!)) stop++;
      const name = sql.slice(i + 1, stop);
      let position = parameters.indexOf(name);
      if (position < 0) position = parameters.push(name) - 1;
      out += `${sql.slice(copied, i)}$${position + 1}`;
      copied = stop;
      i = stop;
    } else if (ch === ';') {
      end ??= i;
      i++;
    } else {
      i++;
    }
  }
  const text = out + sql.slice(copied, end ?? sql.length);
  return { ok: true, sql: { text: end === undefined ? text : text.trimEnd(), parameters, keyword: firstKeyword(sql) } };
}

/** Index just past the closing quote of the literal opening at `start`, or -1. */
function skipQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (backslashEscapes && ch === '\\') {
      i += 2;
    } else if (ch === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i++;
    }
  }
  return -1;
}

/** Index just past the `*\/` closing the (possibly nested) comment opening at `start`, or -1. */
function skipBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return -1;
}

/** The first word of the statement, past spaces, comments and opening parentheses. */
function firstKeyword(sql: string): string {
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (/\s/.test(ch) || ch === '(') i++;
    else if (ch === '-' && sql[i + 1] === '-') {
      const newline = sql.indexOf('\n', i);
      i = newline < 0 ? sql.length : newline + 1;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const close = skipBlockComment(sql, i);
      i = close < 0 ? sql.length : close;
    } else break;
  }
  return /^[A-Za-z_]+/.exec(sql.slice(i))?.[0]?.toLowerCase() ?? '';
}

/**
 * The parameter bound to the call's idempotency key (`<traceId>:<iteration>`, the same when the call
 * is re-sent), not to an input field: a write that records it in the same statement (a unique
 * column, `ON CONFLICT DO NOTHING`) takes effect once however often the call is made.
 */
export const IDEMPOTENCY_KEY_PARAMETER = 'idempotency_key';

/**
 * The parameters an input schema does not declare (not among its `properties`): a query whose
 * parameters are not all typed by the schema is a configuration error. The idempotency key's
 * parameter ({@link IDEMPOTENCY_KEY_PARAMETER}) needs no declaration: the call fills it.
 *
 * @example
 * ```ts
 * undeclaredParameters(['id', 'limit'], { type: 'object', properties: { id: { type: 'string' } } }) // ['limit']
 * ```
 */
export function undeclaredParameters(parameters: readonly string[], inputSchema: unknown): string[] {
  const properties =
    typeof inputSchema === 'object' && inputSchema !== null && Object.hasOwn(inputSchema, 'properties')
      ? (inputSchema as { properties: unknown }).properties
      : undefined;
  const declared = typeof properties === 'object' && properties !== null ? properties : {};
  return parameters.filter((name) => name !== IDEMPOTENCY_KEY_PARAMETER && !Object.hasOwn(declared, name));
}
