/**
 * Time, injected: the recorder stamps events with `now()`, the transport actor measures durations
 * with it, and the host enforces the run timeout with `setTimeout`/`clearTimeout` (the statechart
 * itself has no clock). Tests pass a stepping clock to get byte-identical logs.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * A clock whose time moves only by `step` each time it is read, starting at `start`: deterministic
 * stamps and durations. Timers still run on real time (so timeouts keep working).
 *
 * @example
 * ```ts
 * const clock = createSteppingClock(Date.parse('2026-01-01T00:00:00Z'), 1);
 * ```
 */
export function createSteppingClock(start: number, step = 1): Clock {
  let time = start;
  return {
    now: () => {
      const current = time;
      time += step;
      return current;
    },
    setTimeout: systemClock.setTimeout,
    clearTimeout: systemClock.clearTimeout,
  };
}
