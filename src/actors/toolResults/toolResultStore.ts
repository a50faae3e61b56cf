import { ErrorCode, RedflowError } from '../../errors.js';
import type { ToolResult } from '../tool.js';

/**
 * A completed tool call as the store keeps it: what every repeat of its idempotency key is
 * answered with.
 */
export interface StoredToolResult {
  /** The idempotency key (`<traceId>:<iteration>`), as given. */
  readonly key: string;
  /** The call's result; a failed call (`ok: false`) is a result like any other. */
  readonly result: ToolResult;
  /** Who stored it (the claim's owner, or whoever completed the key first). */
  readonly owner: string;
  /**
   * When it was stored, in ms since the epoch. The NATS KV store reads it from the server's clock;
   * what its `complete` returns for a result it just wrote is this process's estimate.
   */
  readonly completedAt: number;
}

/**
 * What {@link ToolResultStore.claim} decided:
 * - `stored`: the key was completed already; answer its result, do not execute.
 * - `claimed`: the caller holds the key's lease until `until` and must execute the call, keep the
 *   lease alive with `renew`, then `complete` (or `release` when it could not run it).
 * - `busy`: `owner` holds a live lease on the key (it is executing the call right now) until
 *   `until`; wait for its result, or claim again once the lease has run out (its worker died).
 *
 * `until` is in ms since the epoch; for the NATS KV store it is on the server's clock.
 */
export type Claim =
  | ({ readonly kind: 'stored' } & StoredToolResult)
  | { readonly kind: 'claimed'; readonly until: number }
  | { readonly kind: 'busy'; readonly owner: string; readonly until: number };

/**
 * Completed tool results by idempotency key, and leases that let exactly one worker execute a key
 * at a time: what makes a tool call that is re-sent after a crash happen once.
 *
 * A key is in one of three states: unknown (never claimed, or released), running (claimed by an
 * owner whose lease ends at a time), done (a result is stored; it never changes again).
 *
 * **Owners** name one attempt, not one worker: a running key is `busy` even for the owner that
 * holds it, so two concurrent calls in one process never both execute. Use a fresh owner per
 * attempt (`serveIdempotentTool` appends a nonce to the worker's name).
 *
 * **Keys** are idempotency keys: one or more tokens of `[A-Za-z0-9_-]` joined by `:` (a trace id
 * and an iteration, `run-7f3a:2`), at most {@link MAX_TOOL_RESULT_KEY_LENGTH} characters. Anything
 * else fails with `TOOL_RESULT_STORE_FAILED` before the store is touched.
 *
 * Implementations: {@link createInProcessToolResultStore} (one process),
 * `createNatsKvToolResultStore` (JetStream KV, shared by every tool worker). `serveIdempotentTool`
 * is the usual client; by hand:
 *
 * @example
 * ```ts
 * const claim = await store.claim(request.idempotencyKey, `${workerId}#${nonce}`, 10_000);
 * if (claim.kind === 'stored') return claim.result; // done before: do not execute
 * if (claim.kind === 'busy') return waitAndClaimAgain(claim.until); // another worker runs it now
 * const result = await runTool(tool, request, signal); // ours: execute (renew the lease meanwhile)
 * return (await store.complete(request.idempotencyKey, `${workerId}#${nonce}`, result)).result;
 * ```
 */
export interface ToolResultStore {
  /**
   * Atomically: answers `stored` for a done key; takes an unknown key, or a running one whose lease
   * has run out, for `owner` until now + `leaseMs` (`claimed`); otherwise answers `busy`. Of any
   * number of concurrent claimers of one key, exactly one gets `claimed`.
   */
  claim(key: string, owner: string, leaseMs: number): Promise<Claim>;
  /**
   * Extends `owner`'s lease on a running key to now + `leaseMs`. Resolves `false` (and changes
   * nothing) when `owner` no longer holds the key: it was taken over, completed or released.
   */
  renew(key: string, owner: string, leaseMs: number): Promise<boolean>;
  /**
   * Stores `result` as the key's result unless one is stored already: the first completion wins and
   * every later one resolves to the first (so all callers answer the same). Completes a key whatever
   * its state (also one whose lease was taken over while `owner` was still executing). Resolves to
   * what is stored now.
   */
  complete(key: string, owner: string, result: ToolResult): Promise<StoredToolResult>;
  /**
   * Gives up `owner`'s lease on a running key without a result (the call was interrupted and did
   * not finish), so the next claim executes it at once. Does nothing when `owner` does not hold it.
   */
  release(key: string, owner: string): Promise<void>;
  /** The key's stored result, or `undefined` when it is not done. */
  get(key: string): Promise<StoredToolResult | undefined>;
}

/** Longest idempotency key a {@link ToolResultStore} accepts. */
export const MAX_TOOL_RESULT_KEY_LENGTH = 256;

const KEY_PATTERN = /^[A-Za-z0-9_-]+(?::[A-Za-z0-9_-]+)*$/;

/**
 * Throws `TOOL_RESULT_STORE_FAILED` unless `key` is a valid idempotency key for a
 * {@link ToolResultStore} (see its "Keys").
 *
 * @example
 * ```ts
 * checkToolResultKey('run-7f3a:2'); // fine
 * checkToolResultKey('a.b:1'); // throws: '.' is not allowed
 * ```
 */
export function checkToolResultKey(key: unknown): asserts key is string {
  if (typeof key === 'string' && key.length <= MAX_TOOL_RESULT_KEY_LENGTH && KEY_PATTERN.test(key)) return;
  const shown = typeof key === 'string' ? JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key) : typeof key;
  throw new RedflowError({
    code: ErrorCode.TOOL_RESULT_STORE_FAILED,
    message: `invalid idempotency key ${shown}`,
    hint: `an idempotency key is tokens of letters, digits, '_' and '-' joined by ':' (like <traceId>:<iteration>), at most ${MAX_TOOL_RESULT_KEY_LENGTH} characters`,
  });
}

/**
 * The key a tool's call is kept under in a {@link ToolResultStore}: the tool's name, then the
 * call's idempotency key. Each tool has keys of its own, so a result stored for one tool can never
 * answer another tool's call, and in NATS KV (where `:` becomes `.`) a user can be confined to one
 * tool's keys, `<tool>.>` (see deploy/nats/redflow.conf). `serveIdempotentTool` keys every call so.
 *
 * @example
 * ```ts
 * toolResultKey('lookup_order', 'run-7f3a:2'); // 'lookup_order:run-7f3a:2'
 * ```
 */
export function toolResultKey(toolName: string, idempotencyKey: string): string {
  return `${toolName}:${idempotencyKey}`;
}

/**
 * Throws `TOOL_RESULT_STORE_FAILED` unless `leaseMs` is a lease length: an integer number of ms
 * from 1 to one day.
 *
 * @example
 * ```ts
 * checkLeaseMs(10_000); // fine
 * checkLeaseMs(0); // throws
 * ```
 */
export function checkLeaseMs(leaseMs: unknown): asserts leaseMs is number {
  if (typeof leaseMs === 'number' && Number.isInteger(leaseMs) && leaseMs >= 1 && leaseMs <= 24 * 60 * 60 * 1000) return;
  throw new RedflowError({
    code: ErrorCode.TOOL_RESULT_STORE_FAILED,
    message: `a tool result lease must be an integer number of ms from 1 to 86400000, got ${String(leaseMs)}`,
  });
}

/** Options of {@link createInProcessToolResultStore}. */
export interface InProcessToolResultStoreOptions {
  /** The clock, in ms since the epoch. Default `Date.now`. */
  readonly now?: () => number;
}

type Entry =
  | { readonly state: 'running'; readonly owner: string; readonly until: number }
  | { readonly state: 'done'; readonly stored: StoredToolResult };

/**
 * A {@link ToolResultStore} in this process's memory: for embedded mode, tests, and one tool worker
 * whose restarts need not remember anything. Results are copied in and out as JSON (the caller never
 * aliases what is stored) and kept until the process ends, so a long-lived process with many runs
 * should use the NATS KV store (which can expire them) instead.
 *
 * @example
 * ```ts
 * const store = createInProcessToolResultStore();
 * const claim = await store.claim('run-1:1', 'worker-a#1', 10_000); // { kind: 'claimed', until }
 * await store.complete('run-1:1', 'worker-a#1', { ok: true, output: 42 });
 * await store.claim('run-1:1', 'worker-b#1', 10_000); // { kind: 'stored', result: { ok: true, output: 42 }, … }
 * ```
 */
export function createInProcessToolResultStore(options: InProcessToolResultStoreOptions = {}): ToolResultStore {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const copy = (stored: StoredToolResult): StoredToolResult => JSON.parse(JSON.stringify(stored)) as StoredToolResult;

  return {
    async claim(key, owner, leaseMs) {
      checkToolResultKey(key);
      checkLeaseMs(leaseMs);
      const entry = entries.get(key);
      const time = now();
      if (entry?.state === 'done') return { kind: 'stored', ...copy(entry.stored) };
      if (entry?.state === 'running' && entry.until > time) return { kind: 'busy', owner: entry.owner, until: entry.until };
      const until = time + leaseMs;
      entries.set(key, { state: 'running', owner, until });
      return { kind: 'claimed', until };
    },

    async renew(key, owner, leaseMs) {
      checkToolResultKey(key);
      checkLeaseMs(leaseMs);
      const entry = entries.get(key);
      if (entry?.state !== 'running' || entry.owner !== owner) return false;
      entries.set(key, { state: 'running', owner, until: now() + leaseMs });
      return true;
    },

    async complete(key, owner, result) {
      checkToolResultKey(key);
      const entry = entries.get(key);
      if (entry?.state === 'done') return copy(entry.stored);
      const stored = copy({ key, result, owner, completedAt: now() });
      entries.set(key, { state: 'done', stored });
      return copy(stored);
    },

    async release(key, owner) {
      checkToolResultKey(key);
      const entry = entries.get(key);
      if (entry?.state === 'running' && entry.owner === owner) entries.delete(key);
    },

    async get(key) {
      checkToolResultKey(key);
      const entry = entries.get(key);
      return entry?.state === 'done' ? copy(entry.stored) : undefined;
    },
  };
}
