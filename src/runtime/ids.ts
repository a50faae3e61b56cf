import { randomBytes } from 'node:crypto';

/** Where new trace ids come from: injected, so a test can make runs reproducible. */
export interface IdSource {
  traceId(): string;
}

/** Random, sortable-by-time trace ids such as `mb3k1x2a-9f8e7d6c5b4a`. */
export const randomIds: IdSource = {
  traceId: () => `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`,
};

/**
 * Ids `<prefix>-1`, `<prefix>-2`, … for tests and reproducible runs.
 *
 * @example
 * ```ts
 * const ids = createSequentialIds('run'); ids.traceId() // 'run-1'
 * ```
 */
export function createSequentialIds(prefix: string): IdSource {
  let n = 0;
  return { traceId: () => `${prefix}-${++n}` };
}

/** The id of the event at `seq` of a run: the same event always gets the same id. */
export function eventId(traceId: string, seq: number): string {
  return `${traceId}:${seq}`;
}

/**
 * Trace ids are 1–128 letters, digits, `_` or `-`: one NATS subject token, a file name, a KV key
 * (the agent-event schema says the same).
 */
export function isValidTraceId(traceId: unknown): traceId is string {
  return typeof traceId === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(traceId);
}
