import type { NatsConnection } from '@nats-io/transport-node';
import { Subject } from '../actors/subjects.js';
import { validators } from '../contracts/schemas.js';
import type { ReadResult } from '../events/eventStore.js';
import { isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { parseTraceEvents } from '../distributed/traceEvent.js';

/** Options of {@link followClusterRun}. */
export interface FollowClusterRunOptions {
  readonly nc: NatsConnection;
  readonly prefix: string;
  readonly traceId: string;
  /** Events up to this seq are not delivered. */
  readonly afterSeq: number;
  readonly onEvent: (event: AgentEvent) => void;
  /** Reads the run's stored log (a JetStream event store's `read`); rejects with `LOG_NOT_FOUND` for an unknown run. */
  readonly read: (traceId: string) => Promise<ReadResult>;
  /**
   * With no live event for this long, the stored log is read again: a live message lost for good
   * (a reconnection, a slow consumer) is then found in the store. Default 5 s.
   */
  readonly idleCheckMs?: number;
  /** Called once when following stops: after the run's last event, or when stopped. */
  readonly onStop?: () => void;
}

/** The first wait before reading the store again to fill a gap in the live events; it doubles up to `idleCheckMs`. */
const FIRST_GAP_DELAY_MS = 50;

/**
 * Follows a cluster run: calls `onEvent` with every event after `afterSeq`, in seq order, each
 * exactly once, until the run's last event; resolves with a function that stops following. It
 * rejects as `read` does (`LOG_NOT_FOUND` for a run the stream has never seen).
 *
 * Core NATS delivers the live events at most once and JetStream holds them all, so:
 * 1. subscribe to the run's trace subjects **first** (and flush, so the server knows), so an event
 *    stored from now on is either in the log read next or arrives live;
 * 2. read the stored log and deliver its events after `afterSeq`, holding back live events;
 * 3. then deliver live events whose seq is the next one; one already delivered is dropped (each
 *    is both stored and live), one beyond the next is held while the store is read again to fill
 *    the gap (an event `n + 1` is only appended after event `n` is stored, so the store has it);
 * 4. stop after `run.completed` / `run.failed` — at once if the stored log has already ended.
 *
 * Live messages that are not valid events of this run (trace subjects are open to anyone allowed
 * to publish there) are ignored; the store is the truth.
 *
 * @example
 * ```ts
 * const stop = await followClusterRun({ nc, prefix, traceId, afterSeq: 0, onEvent: send, read: store.read });
 * ```
 */
export async function followClusterRun(options: FollowClusterRunOptions): Promise<() => void> {
  const { traceId, onEvent } = options;
  const idleCheckMs = options.idleCheckMs ?? 5000;
  let lastSeq = options.afterSeq;
  let stopped = false;
  let caughtUp = false;
  let lastActivity = Date.now();
  /** Live events not delivered yet, by seq. */
  const held = new Map<number, AgentEvent>();
  let gapTimer: ReturnType<typeof setTimeout> | undefined;
  let gapDelay = FIRST_GAP_DELAY_MS;
  let reading: Promise<void> | undefined;
  let readAgain = false;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    subscription.unsubscribe();
    clearInterval(idle);
    if (gapTimer !== undefined) clearTimeout(gapTimer);
    held.clear();
    options.onStop?.();
  };

  const deliver = (event: AgentEvent) => {
    lastSeq = event.seq;
    lastActivity = Date.now();
    try {
      onEvent(event);
    } catch {
      // The caller's failure (a closed response, say) is the caller's to handle.
    }
    if (isTerminal(event)) stop();
  };

  /** Delivers the held live events that come next; asks the store for a gap. */
  const drain = () => {
    if (!caughtUp) return;
    for (let next = held.get(lastSeq + 1); next && !stopped; next = held.get(lastSeq + 1)) {
      held.delete(next.seq);
      deliver(next);
    }
    for (const seq of held.keys()) if (seq <= lastSeq) held.delete(seq);
    if (stopped) return;
    if (held.size === 0) {
      gapDelay = FIRST_GAP_DELAY_MS;
      return;
    }
    if (gapTimer !== undefined) return;
    gapTimer = setTimeout(() => {
      gapTimer = undefined;
      void catchUp();
    }, gapDelay);
    gapDelay = Math.min(gapDelay * 2, idleCheckMs);
  };

  /** Delivers what the stored log holds after `lastSeq`; stops if it has ended. Rejects as `read` does. */
  const readStore = async () => {
    const { events } = await options.read(traceId);
    if (stopped) return;
    for (const event of events) {
      if (stopped) return;
      if (event.seq === lastSeq + 1) deliver(event);
    }
    const last = events[events.length - 1];
    // Asked to follow from the end of a finished run, or past it: nothing more will come.
    if (!stopped && last !== undefined && isTerminal(last) && lastSeq >= last.seq) stop();
  };

  /** {@link readStore}, one at a time (a request made meanwhile reads once more after), never rejecting. */
  const catchUp = (): Promise<void> => {
    if (reading) {
      readAgain = true;
      return reading;
    }
    reading = (async () => {
      do {
        readAgain = false;
        // Failures are left to the next gap or idle check.
        await readStore().catch(() => undefined);
        drain();
      } while (readAgain && !stopped);
    })().finally(() => (reading = undefined));
    return reading;
  };

  const subscription = options.nc.subscribe(Subject.runTrace(options.prefix, traceId), {
    callback: (error, message) => {
      if (error || stopped) return;
      let added = false;
      for (const event of parseTraceEvents(message.data) ?? []) {
        if (!validators.agentEvent(event) || event.traceId !== traceId) continue;
        lastActivity = Date.now();
        if (event.seq <= lastSeq || held.has(event.seq)) continue;
        held.set(event.seq, event);
        added = true;
      }
      if (added) drain();
    },
  });
  const idle = setInterval(() => {
    if (!stopped && caughtUp && Date.now() - lastActivity >= idleCheckMs) {
      lastActivity = Date.now();
      void catchUp();
    }
  }, Math.max(50, Math.floor(idleCheckMs / 2)));
  idle.unref();

  try {
    // The server must know of the subscription before the log is read, or an event stored in
    // between would be in neither.
    await options.nc.flush();
    await readStore();
  } catch (error) {
    stop();
    throw error;
  }
  caughtUp = true;
  drain();
  return stop;
}
