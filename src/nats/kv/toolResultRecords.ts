import type { KvEntry } from '@nats-io/kv';
import { ErrorCode, RedflowError, type ErrorInfo } from '../../errors.js';
import type { ToolResult } from '../../actors/tool.js';

// The records the NATS KV tool result store keeps, one JSON value per key, and how they are read
// back: apart from the store so that it stays about leases and revisions.

/**
 * What one KV value holds (JSON). A running key's lease ends `leaseMs` after the entry's server
 * timestamp; a done key's completion time is that timestamp.
 *
 * @example
 * ```ts
 * const running: ToolResultRecord = { v: 1, state: 'running', owner: 'worker-a#1f', leaseMs: 10_000 };
 * ```
 */
export type ToolResultRecord = RunningToolResultRecord | DoneToolResultRecord;

/**
 * A key a worker executes: its owner (one attempt) and lease length.
 *
 * @example
 * ```ts
 * const running: RunningToolResultRecord = { v: 1, state: 'running', owner: 'worker-a#1f', leaseMs: 10_000 };
 * ```
 */
export interface RunningToolResultRecord {
  readonly v: 1;
  readonly state: 'running';
  readonly owner: string;
  readonly leaseMs: number;
}

/**
 * A key whose result is stored: it never changes again.
 *
 * @example
 * ```ts
 * const done: DoneToolResultRecord = { v: 1, state: 'done', owner: 'worker-a#1f', result: { ok: true, output: 42 } };
 * ```
 */
export interface DoneToolResultRecord {
  readonly v: 1;
  readonly state: 'done';
  readonly owner: string;
  readonly result: ToolResult;
}

/**
 * A fresh, plain copy of a result (what JSON keeps of it).
 *
 * @example
 * ```ts
 * plainToolResult({ ok: true, output: { at: new Date(0) } }); // { ok: true, output: { at: '1970-01-01T00:00:00.000Z' } }
 * ```
 */
export function plainToolResult(result: ToolResult): ToolResult {
  return JSON.parse(JSON.stringify(result)) as ToolResult;
}

/**
 * The record a KV entry holds, or `TOOL_RESULT_STORE_FAILED` naming `where` when it is not one the
 * store wrote.
 *
 * @example
 * ```ts
 * const record = parseToolResultRecord(entry, 'idempotency key run-1:2 in NATS KV bucket redflow-tool-results');
 * ```
 */
export function parseToolResultRecord(entry: KvEntry, where: string): ToolResultRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(entry.string());
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed)) return parsed;
  throw new RedflowError({
    code: ErrorCode.TOOL_RESULT_STORE_FAILED,
    message: `${where} does not hold a tool result record (revision ${entry.revision})`,
    hint: 'something else wrote the key; delete it (nats kv del) and the call runs again on its next request',
  });
}

function isRecord(value: unknown): value is ToolResultRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  if (record.v !== 1 || typeof record.owner !== 'string') return false;
  if (record.state === 'running') return typeof record.leaseMs === 'number' && Number.isInteger(record.leaseMs) && record.leaseMs > 0;
  return record.state === 'done' && isToolResult(record.result);
}

function isToolResult(value: unknown): value is ToolResult {
  if (typeof value !== 'object' || value === null) return false;
  const result = value as { ok?: unknown; error?: unknown };
  if (result.ok === true) return true;
  if (result.ok !== false || typeof result.error !== 'object' || result.error === null) return false;
  const error = result.error as Partial<ErrorInfo>;
  return typeof error.code === 'string' && typeof error.message === 'string';
}
