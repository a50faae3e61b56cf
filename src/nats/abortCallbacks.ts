/**
 * Callbacks run when a signal aborts, with one `abort` listener per signal however many requests
 * wait on it. A run's requests share its signal; Node's EventTarget makes adding and removing a
 * listener cost more than the rest of a request's bookkeeping, so each request adds to a set.
 */
const callbacksOf = new WeakMap<AbortSignal, Set<() => void>>();

/** Runs `callback` once when `signal` aborts, unless {@link forgetOnAbort} removes it first. */
export function onAbort(signal: AbortSignal, callback: () => void): void {
  let callbacks = callbacksOf.get(signal);
  if (callbacks === undefined) {
    const created = new Set<() => void>();
    callbacks = created;
    callbacksOf.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        callbacksOf.delete(signal);
        for (const run of created) run();
      },
      { once: true },
    );
  }
  callbacks.add(callback);
}

/** Removes a callback {@link onAbort} added (its request ended before the signal aborted). */
export function forgetOnAbort(signal: AbortSignal, callback: () => void): void {
  callbacksOf.get(signal)?.delete(callback);
}
