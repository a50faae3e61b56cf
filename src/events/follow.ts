import { ErrorCode, RedflowError, errorInfo } from '../errors.js';

/**
 * Refuses a follow's `afterSeq` that is not a whole number ≥ 0, the same way in every store.
 *
 * @throws RedflowError `LOG_CURSOR_INVALID`.
 */
export function checkFollowCursor(traceId: string, afterSeq: number): void {
  if (Number.isSafeInteger(afterSeq) && afterSeq >= 0) return;
  throw new RedflowError(
    errorInfo(ErrorCode.LOG_CURSOR_INVALID, `cannot follow run ${traceId} after seq ${String(afterSeq)}`, {
      hint: 'afterSeq is the seq of the last event the follower has: a whole number, 0 for the whole run',
    }),
  );
}

/**
 * Followers waiting for the next append to a log, by key (a trace id, a file): `wait` resolves at
 * the next `ring` of its key, or at once when its signal aborts, and leaves nothing registered
 * once it has resolved. Written by hand because it is this small: an EventEmitter would hold a
 * listener array per key and warn past ten followers of one run.
 */
export class AppendBells {
  readonly #waiting = new Map<string, Set<() => void>>();

  /** True while someone waits (a store rings only then: its append stays free otherwise). */
  get idle(): boolean {
    return this.#waiting.size === 0;
  }

  /** Wakes every follower waiting on `key`. */
  ring(key: string): void {
    const bells = this.#waiting.get(key);
    if (bells === undefined) return;
    this.#waiting.delete(key);
    for (const bell of bells) bell();
  }

  /** Resolves at the next ring of `key`, or when `signal` aborts. */
  wait(key: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted === true) return resolve();
      let bells = this.#waiting.get(key);
      if (bells === undefined) this.#waiting.set(key, (bells = new Set()));
      const held = bells;
      const done = () => {
        signal?.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = () => {
        held.delete(done);
        if (held.size === 0 && this.#waiting.get(key) === held) this.#waiting.delete(key);
        resolve();
      };
      held.add(done);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}
