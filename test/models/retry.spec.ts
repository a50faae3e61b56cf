import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  abortableSleep,
  computeBackoffDelay,
  isRetryableError,
  retryWithBackoff,
  type SleepFunction,
} from '../../src/actors/retry.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';

function retryable(message = 'try again'): RedflowError {
  return new RedflowError({ code: ErrorCode.MODEL_SERVER_ERROR, message, retryable: true });
}

/** A sleep that records what it was asked to wait and returns at once. */
function recordingSleep(): { sleep: SleepFunction; delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms) => {
      delays.push(ms);
    },
  };
}

/** An attempt function failing with the given errors in order, then resolving `value`. */
function failThen<T>(errors: unknown[], value: T): (n: number) => Promise<T> {
  return async (n) => {
    const error = errors[n - 1];
    if (error !== undefined) throw error;
    return value;
  };
}

describe('retryWithBackoff', () => {
  it('should resolve the value with attempts 1 when the first attempt succeeds', async () => {
    const { sleep, delays } = recordingSleep();
    await expect(retryWithBackoff(async () => 'ok', { sleep })).resolves.toEqual({ value: 'ok', attempts: 1 });
    expect(delays).toEqual([]);
  });

  it('should pass the 1-based attempt number and count attempts', async () => {
    const { sleep } = recordingSleep();
    const seen: number[] = [];
    const result = await retryWithBackoff(
      async (n) => {
        seen.push(n);
        if (n < 3) throw retryable();
        return n * 10;
      },
      { sleep },
    );
    expect(seen).toEqual([1, 2, 3]);
    expect(result).toEqual({ value: 30, attempts: 3 });
  });

  it('should grow the backoff exponentially up to maxDelayMs', async () => {
    const { sleep, delays } = recordingSleep();
    const errors = Array.from({ length: 5 }, () => retryable());
    await retryWithBackoff(failThen(errors, 'ok'), {
      sleep,
      random: () => 0.5,
      baseDelayMs: 100,
      factor: 3,
      maxDelayMs: 2000,
      maxRetries: 5,
    });
    // 0.5 * min(2000, 100 * 3^i) for i = 0..4
    expect(delays).toEqual([50, 150, 450, 1000, 1000]);
  });

  it('should use the documented defaults (250 ms base, factor 2, 8000 ms cap, 3 retries)', async () => {
    const { sleep, delays } = recordingSleep();
    const attempt = vi.fn(async () => {
      throw retryable();
    });
    await expect(retryWithBackoff(attempt, { sleep, random: () => 1 })).rejects.toThrow('try again');
    expect(attempt).toHaveBeenCalledTimes(4);
    expect(delays).toEqual([250, 500, 1000]);
    expect(computeBackoffDelay(10, {}, () => 1)).toBe(8000);
  });

  it('should keep full-jitter delays within [0, min(maxDelayMs, base * factor^i)]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 100_000 }),
        (retryIndex, r, base, max) => {
          const delay = computeBackoffDelay(retryIndex, { baseDelayMs: base, maxDelayMs: max }, () => r);
          const ceiling = Math.min(max, base * 2 ** retryIndex);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(ceiling);
          expect(delay).toBeCloseTo(ceiling * r, 6);
        },
      ),
    );
  });

  it('should draw a fresh random value for every wait', async () => {
    const { sleep, delays } = recordingSleep();
    const randoms = [0, 0.25, 0.75];
    let i = 0;
    await retryWithBackoff(failThen([retryable(), retryable(), retryable()], 'ok'), {
      sleep,
      random: () => randoms[i++] ?? 0,
      baseDelayMs: 100,
    });
    expect(delays).toEqual([0, 50, 300]);
  });

  it('should give up after maxRetries and rethrow the last error unchanged', async () => {
    const { sleep, delays } = recordingSleep();
    const last = retryable('third');
    const attempt = vi.fn(failThen([retryable('first'), retryable('second'), last], 'never'));
    await expect(retryWithBackoff(attempt, { sleep, maxRetries: 2 })).rejects.toBe(last);
    expect(attempt).toHaveBeenCalledTimes(3);
    expect(delays).toHaveLength(2);
  });

  it('should make a single attempt with maxRetries 0', async () => {
    const attempt = vi.fn(async () => {
      throw retryable();
    });
    await expect(retryWithBackoff(attempt, { maxRetries: 0 })).rejects.toThrow('try again');
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('should not retry errors that are not retryable by default', async () => {
    const { sleep } = recordingSleep();
    for (const error of [
      new RedflowError({ code: ErrorCode.MODEL_REQUEST_REJECTED, message: 'bad request' }),
      new Error('plain error'),
      'a string',
    ]) {
      const attempt = vi.fn(async () => {
        throw error;
      });
      await expect(retryWithBackoff(attempt, { sleep })).rejects.toBe(error);
      expect(attempt).toHaveBeenCalledTimes(1);
    }
    expect(isRetryableError(retryable())).toBe(true);
    expect(isRetryableError({ retryable: true })).toBe(false);
  });

  it('should use a custom shouldRetry predicate', async () => {
    const { sleep } = recordingSleep();
    const flaky = new Error('flaky');
    const shouldRetry = vi.fn((error: unknown) => error === flaky);
    const result = await retryWithBackoff(failThen([flaky, flaky], 'ok'), { sleep, shouldRetry });
    expect(result.attempts).toBe(3);
    expect(shouldRetry).toHaveBeenCalledWith(flaky, 1);
    expect(shouldRetry).toHaveBeenCalledWith(flaky, 2);
  });

  it('should wait retryAfterMs instead of the backoff, capped at maxDelayMs', async () => {
    const { sleep, delays } = recordingSleep();
    const withRetryAfter = (ms: number): RedflowError => Object.assign(retryable(), { retryAfterMs: ms });
    await retryWithBackoff(failThen([withRetryAfter(1234), withRetryAfter(60_000), retryable()], 'ok'), {
      sleep,
      random: () => 0,
      maxDelayMs: 5000,
    });
    expect(delays).toEqual([1234, 5000, 0]);
  });

  it('should ignore an unusable retryAfterMs', async () => {
    const { sleep, delays } = recordingSleep();
    const bad = Object.assign(retryable(), { retryAfterMs: Number.NaN });
    await retryWithBackoff(failThen([bad], 'ok'), { sleep, random: () => 1, baseDelayMs: 40 });
    expect(delays).toEqual([40]);
  });

  it('should tell onRetry about every retry', async () => {
    const { sleep } = recordingSleep();
    const first = retryable('one');
    const onRetry = vi.fn();
    await retryWithBackoff(failThen([first], 'ok'), { sleep, onRetry, random: () => 1, baseDelayMs: 7 });
    expect(onRetry).toHaveBeenCalledTimes(1);
    expect(onRetry).toHaveBeenCalledWith({ attempt: 1, delayMs: 7, error: first });
  });

  it('should stop waiting with RUN_ABORTED when the signal aborts during the backoff', async () => {
    const controller = new AbortController();
    const attempt = vi.fn(async () => {
      throw retryable();
    });
    const started = performance.now();
    setTimeout(() => controller.abort(), 20);
    const promise = retryWithBackoff(attempt, { signal: controller.signal, baseDelayMs: 10_000, random: () => 1 });
    await expect(promise).rejects.toMatchObject({ code: ErrorCode.RUN_ABORTED });
    expect(performance.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('should stop on abort even when the injected sleep ignores the signal', async () => {
    const controller = new AbortController();
    const neverEnding: SleepFunction = () => new Promise<void>(() => {});
    setTimeout(() => controller.abort(), 10);
    await expect(
      retryWithBackoff(
        async () => {
          throw retryable();
        },
        { signal: controller.signal, sleep: neverEnding },
      ),
    ).rejects.toMatchObject({ code: ErrorCode.RUN_ABORTED });
  });

  it('should not call the attempt when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const attempt = vi.fn(async () => 'x');
    await expect(retryWithBackoff(attempt, { signal: controller.signal })).rejects.toMatchObject({ code: ErrorCode.RUN_ABORTED });
    expect(attempt).not.toHaveBeenCalled();
  });

  it('should not retry a failure that happened because of the abort', async () => {
    const controller = new AbortController();
    const { sleep, delays } = recordingSleep();
    const attempt = vi.fn(async () => {
      controller.abort();
      throw retryable();
    });
    await expect(retryWithBackoff(attempt, { signal: controller.signal, sleep })).rejects.toMatchObject({
      code: ErrorCode.RUN_ABORTED,
    });
    expect(attempt).toHaveBeenCalledTimes(1);
    expect(delays).toEqual([]);
  });
});

describe('abortableSleep', () => {
  it('should resolve after the delay', async () => {
    const started = performance.now();
    await abortableSleep(30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('should reject with RUN_ABORTED when aborted, keeping the reason as cause', async () => {
    const controller = new AbortController();
    const reason = new Error('user pressed ctrl-c');
    setTimeout(() => controller.abort(reason), 5);
    const error = await abortableSleep(10_000, controller.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).code).toBe(ErrorCode.RUN_ABORTED);
    expect((error as RedflowError).cause).toBe(reason);
  });
});
