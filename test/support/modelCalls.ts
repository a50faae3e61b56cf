import { expect } from 'vitest';
import type { SleepFunction } from '../../src/actors/retry.js';
import { RedflowError } from '../../src/errors.js';

/** The `RedflowError` a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function caught(promise: Promise<unknown>): Promise<RedflowError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(RedflowError);
    return error as RedflowError;
  }
  throw new Error('expected the promise to reject');
}

/**
 * A backoff sleep that records each delay asked for in `waits` and waits 1 ms, so retries stay
 * fast but still go through a real timer; aborts with the signal.
 */
export function recordingSleep(waits: number[]): SleepFunction {
  return (ms, signal) => {
    waits.push(ms);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, 1);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        },
        { once: true },
      );
    });
  };
}

/** A signal that never aborts. */
export const never = (): AbortSignal => new AbortController().signal;
