import { ErrorCode, RedflowError } from '../errors.js';

/** Waits `ms` milliseconds; must reject promptly when `signal` aborts. */
export type SleepFunction = (ms: number, signal?: AbortSignal) => Promise<void>;

/** What {@link RetryOptions.onRetry} is told before each wait. */
export interface RetryNotice {
  /** The attempt that just failed (1-based). */
  readonly attempt: number;
  /** How long the helper now waits before the next attempt. */
  readonly delayMs: number;
  /** What the failed attempt threw. */
  readonly error: unknown;
}

/** The shape of the backoff curve: `min(maxDelayMs, baseDelayMs * factor^retryIndex)`. */
export interface BackoffOptions {
  /** Delay cap before jitter for the first retry. Default 250 ms. */
  readonly baseDelayMs?: number;
  /** Growth of the cap per retry. Default 2. */
  readonly factor?: number;
  /** Upper bound of any wait, `Retry-After` included. Default 8000 ms. */
  readonly maxDelayMs?: number;
}

/** Options of {@link retryWithBackoff}. Every member is optional. */
export interface RetryOptions extends BackoffOptions {
  /** Retries after the first attempt, so at most `maxRetries + 1` attempts. Default 3. */
  readonly maxRetries?: number;
  /** Source of jitter in `[0, 1)`. Default `Math.random`; inject a fixed one in tests. */
  readonly random?: () => number;
  /** How to wait. Default {@link abortableSleep} (real timers). */
  readonly sleep?: SleepFunction;
  /**
   * Whether a failure is worth another attempt. Default {@link isRetryableError}: a
   * `RedflowError` with `retryable === true`. `attempt` is the 1-based attempt that failed.
   */
  readonly shouldRetry?: (error: unknown, attempt: number) => boolean;
  /** Stops everything at once: no further attempt and no further waiting; throws `RUN_ABORTED`. */
  readonly signal?: AbortSignal;
  /** Called before each wait, e.g. to log the retry. Must not throw. */
  readonly onRetry?: (notice: RetryNotice) => void;
}

/** What {@link retryWithBackoff} resolves to: the value and how many attempts it took (≥ 1). */
export interface RetryResult<T> {
  readonly value: T;
  readonly attempts: number;
}

/** Defaults of {@link RetryOptions}, defined once. */
export const RETRY_DEFAULTS = {
  baseDelayMs: 250,
  factor: 2,
  maxDelayMs: 8000,
  maxRetries: 3,
} as const;

/**
 * The default retry predicate: only a {@link RedflowError} that says it is retryable.
 *
 * @example
 * ```ts
 * isRetryableError(new RedflowError({ code: ErrorCode.MODEL_TIMEOUT, message: 'slow', retryable: true })); // true
 * ```
 */
export function isRetryableError(error: unknown): boolean {
  return error instanceof RedflowError && error.retryable;
}

/**
 * The `RUN_ABORTED` error for an aborted signal. The signal's reason is kept as `cause`.
 *
 * @example
 * ```ts
 * if (signal.aborted) throw abortError(signal, 'the model request');
 * ```
 */
export function abortError(signal: AbortSignal, what = 'the operation'): RedflowError {
  return new RedflowError(
    { code: ErrorCode.RUN_ABORTED, message: `${what} was aborted` },
    { cause: signal.reason },
  );
}

/**
 * Waits `ms` milliseconds with a real timer; rejects with `RUN_ABORTED` as soon as `signal` aborts
 * (or at once when it already is).
 *
 * @example
 * ```ts
 * await abortableSleep(100, controller.signal);
 * ```
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal as AbortSignal));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(2_147_483_647, Math.max(0, ms)),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The "full jitter" delay before retry number `retryIndex + 1`: uniformly in
 * `[0, min(maxDelayMs, baseDelayMs * factor^retryIndex)]`.
 *
 * @param retryIndex 0 for the wait after the first failed attempt, 1 after the second, …
 * @param random a value in `[0, 1)`; values outside are clamped.
 *
 * @example
 * ```ts
 * computeBackoffDelay(2, {}, () => 0.5); // 0.5 * min(8000, 250 * 2^2) = 500
 * ```
 */
export function computeBackoffDelay(retryIndex: number, options: BackoffOptions, random: () => number): number {
  const base = options.baseDelayMs ?? RETRY_DEFAULTS.baseDelayMs;
  const factor = options.factor ?? RETRY_DEFAULTS.factor;
  const max = options.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs;
  const ceiling = Math.min(max, base * Math.pow(factor, Math.max(0, retryIndex)));
  const r = Math.min(1, Math.max(0, random()));
  return Number.isFinite(ceiling) ? Math.max(0, ceiling * r) : 0;
}

/** Reads an optional `retryAfterMs` (e.g. from HTTP `Retry-After`) off a thrown value. */
function retryAfterOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('retryAfterMs' in error)) return undefined;
  const value = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Waits through `sleep`, but settles with `RUN_ABORTED` the moment `signal` aborts, whatever `sleep` does. */
async function waitUnlessAborted(ms: number, sleep: SleepFunction, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) {
    await sleep(ms);
    return;
  }
  if (signal.aborted) throw abortError(signal);
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([sleep(ms, signal), aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  if (signal.aborted) throw abortError(signal);
}

/**
 * Runs `attempt` until it resolves, a failure is not retryable, or `maxRetries` retries are used
 * up; then the last failure is rethrown unchanged. Between attempts it waits with exponential
 * backoff and full jitter, or for the failure's `retryAfterMs` (capped at `maxDelayMs`) when it has
 * one. When `signal` aborts, it stops at once with a `RUN_ABORTED` {@link RedflowError}.
 *
 * @param attempt called with the 1-based attempt number.
 * @returns the value and the number of attempts made.
 *
 * @example
 * ```ts
 * const { value, attempts } = await retryWithBackoff((n) => callServer(n), {
 *   maxRetries: 2,
 *   signal,
 * });
 * ```
 */
export async function retryWithBackoff<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<RetryResult<T>> {
  const maxRetries = Math.max(0, Math.floor(options.maxRetries ?? RETRY_DEFAULTS.maxRetries));
  const maxDelay = options.maxDelayMs ?? RETRY_DEFAULTS.maxDelayMs;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const shouldRetry = options.shouldRetry ?? isRetryableError;
  const { signal } = options;

  for (let n = 1; ; n++) {
    if (signal?.aborted) throw abortError(signal);
    try {
      const value = await attempt(n);
      return { value, attempts: n };
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      if (n > maxRetries || !shouldRetry(error, n)) throw error;
      const retryAfter = retryAfterOf(error);
      const delayMs =
        retryAfter !== undefined ? Math.min(retryAfter, maxDelay) : computeBackoffDelay(n - 1, options, random);
      options.onRetry?.({ attempt: n, delayMs, error });
      await waitUnlessAborted(delayMs, sleep, signal);
    }
  }
}
