import { ErrorCode, RedflowError } from '../errors.js';

/** A signal that aborts when its parent does or when its time is up, and says which. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** True once the time ran out (as opposed to the parent aborting). */
  timedOut(): boolean;
  /** Stops the timer and lets go of the parent; call it when the work is over. */
  dispose(): void;
}

/**
 * One attempt's signal: aborted by `parent` (the run's signal) or after `ms`.
 *
 * @example
 * ```ts
 * const deadline = startDeadline(context.signal, 10_000);
 * try { await fetch(url, { signal: deadline.signal }); } finally { deadline.dispose(); }
 * ```
 */
export function startDeadline(parent: AbortSignal, ms: number): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort();
  }, ms);
  const onAbort = (): void => controller.abort();
  parent.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => expired,
    dispose() {
      clearTimeout(timer);
      parent.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * The error of a call its run's abort ended (`RUN_ABORTED`), named by the tool or model's label.
 *
 * @example
 * ```ts
 * if (context.signal.aborted) throw abortedByRun(`http tool 'weather'`);
 * ```
 */
export function abortedByRun(label: string): RedflowError {
  return new RedflowError({ code: ErrorCode.RUN_ABORTED, message: `${label}: aborted because the run was aborted` });
}
