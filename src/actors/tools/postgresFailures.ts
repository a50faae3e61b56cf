import type pg from 'pg';
import { ErrorCode, RedflowError } from '../../errors.js';
import { registerSecret } from '../../secrets/secrets.js';

// A PostgreSQL tool's connection and its failures as typed errors that never show a password.

/** The pool of a tool and what its messages must never show. */
export interface Connection {
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

/** The connection string and the password in it (raw and decoded), to cut from messages. */
export function secretsOf(config: pg.ClientConfig): string[] {
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
export function registered(secrets: readonly string[]): readonly string[] {
  for (const secret of secrets) registerSecret(secret);
  return secrets;
}

/** What node-postgres can read: a postgres:// (or postgresql://, socket:) URL, or a socket path. */
export function isConnectionUrl(connectionString: string): boolean {
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

export function connectError(error: unknown, connection: Connection, label: string): RedflowError {
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

export function queryError(error: unknown, connection: Connection, label: string, timeoutMs: number): RedflowError {
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

export function timeoutError(label: string, timeoutMs: number): RedflowError {
  return new RedflowError({
    code: ErrorCode.TOOL_TIMEOUT,
    message: `${label}: no result within ${timeoutMs} ms`,
    hint: 'raise the node\'s "timeoutMs" or make the query cheaper (an index, a narrower WHERE)',
    retryable: true,
  });
}
