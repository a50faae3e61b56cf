import type { ToolResult } from '../tool.js';
import type { ToolResultStore } from './toolResultStore.js';

/** Options of {@link completePatiently}; every member has a default. */
export interface CompletePatientlyOptions {
  /** How long to keep trying before answering the result unstored. Default 30 s: a NATS restart. */
  readonly patienceMs?: number;
  /** How long one write may go unanswered before another is sent. Default 1 s. */
  readonly attemptMs?: number;
}

const DEFAULT_PATIENCE_MS = 30_000;
const DEFAULT_ATTEMPT_MS = 1000;
const MAX_BACKOFF_MS = 500;

/**
 * Stores a finished call's result (`store.complete`) and resolves to what the store holds for the
 * key: the result that every repeat of the key is answered with. A result that is not stored is
 * executed again by the next request of its key, so this keeps trying through a store that is
 * unreachable for a while (a NATS restart), for up to `patienceMs`; then it resolves to `result`
 * itself, unstored, after telling `report`. A write that stays unanswered for `attemptMs` is not
 * waited for: nats.js drops what is published while it is disconnected without a word, leaving the
 * request to its 5 s timeout, so another write goes out (the first to land wins; `complete` keeps
 * the first result stored). Never rejects.
 *
 * @example
 * ```ts
 * const answer = await completePatiently(store, 'effect:run-1:1', 'worker-a#1f', result, (line) => log(line));
 * ```
 */
export async function completePatiently(
  store: ToolResultStore,
  key: string,
  owner: string,
  result: ToolResult,
  report: (what: string) => void,
  options: CompletePatientlyOptions = {},
): Promise<ToolResult> {
  const giveUpAt = Date.now() + (options.patienceMs ?? DEFAULT_PATIENCE_MS);
  const attemptMs = options.attemptMs ?? DEFAULT_ATTEMPT_MS;
  let problem = 'no answer from the store';
  for (let backoff = 50; Date.now() < giveUpAt; backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)) {
    const outcome = await answerWithin(store.complete(key, owner, result), Math.min(attemptMs, Math.max(1, giveUpAt - Date.now())));
    if (outcome.kind === 'value') return outcome.value.result;
    if (outcome.kind === 'error') {
      problem = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
      await new Promise((resolve) => setTimeout(resolve, Math.min(backoff, Math.max(0, giveUpAt - Date.now()))));
    }
  }
  report(`answering a result that could not be stored (a repeat of this key would run again): ${problem}`);
  return result;
}

type Answer<T> = { readonly kind: 'value'; readonly value: T } | { readonly kind: 'error'; readonly error: unknown } | { readonly kind: 'late' };

/** How `promise` settles within `ms`, or `late` (its later outcome is then ignored). */
function answerWithin<T>(promise: Promise<T>, ms: number): Promise<Answer<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'late' }), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve({ kind: 'value', value });
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve({ kind: 'error', error });
      },
    );
  });
}
