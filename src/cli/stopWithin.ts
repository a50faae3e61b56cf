import type { NatsConnection } from '../nats/index.js';

/**
 * How long a stopping process (`redflow worker`) waits for a clean stop: its services drained,
 * its leases released, its connection drained. Each of these needs the server; with the server
 * gone they would wait for it forever. Below Docker's and systemd's default grace before SIGKILL.
 */
export const STOP_DEADLINE_MS = 5000;

/**
 * Stops what a process runs on a NATS connection within `deadlineMs`: calls `closers` in order
 * (a failing one does not stop the others), then drains the connection. When that has not ended
 * by the deadline (the server is unreachable, a drain waits for it), the connection is closed
 * without draining: whatever it still owed is dropped, which the cluster survives (a run's lease
 * expires and another core worker takes it over; a request gets no answer and is re-sent).
 *
 * @returns `true` for a clean stop, `false` when the deadline cut it short.
 *
 * @example
 * ```ts
 * const clean = await stopWithin([() => worker.close()], nc, STOP_DEADLINE_MS);
 * ```
 */
export async function stopWithin(
  closers: readonly (() => Promise<void>)[],
  nc: NatsConnection,
  deadlineMs: number = STOP_DEADLINE_MS,
): Promise<boolean> {
  const clean = (async () => {
    for (const close of closers) await close().catch(() => undefined);
    if (!nc.isClosed()) await nc.drain().catch(() => undefined);
    return true;
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), deadlineMs);
  });
  try {
    return await Promise.race([clean, late]);
  } finally {
    clearTimeout(timer);
    // Closing ends the reconnection attempts and fails what still waits on the connection, so
    // nothing of it keeps the process alive.
    if (!nc.isClosed()) await nc.close().catch(() => undefined);
  }
}

/** How long a stopped process may take to end by itself before {@link exitAfterGrace} ends it. */
export const EXIT_GRACE_MS = 1000;

/**
 * Ends the process with `code` unless it ends by itself within `graceMs`. Whatever is left running
 * after a stop (a tool that ignores its abort signal and keeps its own timer, a retry loop of a
 * store cut off by the closed connection) must not keep a stopped worker alive. The timer does not
 * keep the process alive itself: it only cuts short what would.
 *
 * @example
 * ```ts
 * await stopWithin(closers, nc);
 * exitAfterGrace(ExitCode.Ok);
 * return ExitCode.Ok;
 * ```
 */
export function exitAfterGrace(code: number, graceMs: number = EXIT_GRACE_MS): void {
  setTimeout(() => process.exit(code), graceMs).unref();
}
