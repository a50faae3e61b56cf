import { isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { pendingWait } from '../events/pendingWait.js';
import type { RunLiveMessage } from '../runtime/serveActors.js';

/** How a run under way is stopped: what a `RunHandle` has. */
export interface RunStopper {
  /** Ends the run as `aborted`. */
  abort(reason?: string): void;
  /** Stops working on the run without recording anything: it goes on where it is resumed. */
  stop(): void;
}

/** A run as its host launched it (see `RunHost.launch`). */
export interface LaunchedRun {
  readonly handle: RunStopper;
  /**
   * Settles once the run is over and its log closed: resolves when it ended, rejects when it
   * stopped, failed, or parked in a wait (`RunWaitingError`).
   */
  readonly finished: Promise<unknown>;
}

/** What a launch hands the run it starts. */
export interface LaunchPorts {
  /** Aborted when the run is aborted before its handle exists (an abort while it starts). */
  readonly signal: AbortSignal;
  /** Keeps an event of the run: call it from the run's `onEvent`, before anything else. */
  readonly record: (event: AgentEvent) => void;
  /** Hands a piece of an answer as it streams to who follows the run (never stored): the run's `onChunk`. */
  readonly showChunk: (chunk: RunLiveMessage) => void;
}

/**
 * A run under way in a host: its events so far (what a read answers while the run is here), how
 * to stop it, and who waits for its next event. Known before its first event is written, so a
 * follower or an abort that comes while it starts finds it.
 *
 * @example
 * ```ts
 * const run = await host.launch(traceId, ({ signal, record }) => launchIt({ signal, onEvent: record }));
 * await run.changed(0, 5_000); // its first event is in, it ended, or 5 s passed
 * ```
 */
export class LiveRun {
  readonly traceId: string;
  /** Every event so far, in seq order. */
  readonly events: AgentEvent[];
  /** Settles once the run is over (ended, stopped, failed or parked) and its log closed, or its start failed. */
  readonly settled: Promise<void>;
  /** Set once the run is launched. */
  handle: RunStopper | undefined;
  /** The run's terminal event is in: nothing more will come. */
  ended = false;
  readonly controller = new AbortController();
  /** How many events it had from its log when it was launched (a resumed run's). */
  private readonly logged: number;
  private readonly listeners = new Set<() => void>();
  private readonly chunkFollowers = new Set<(chunk: RunLiveMessage) => void>();
  private settle!: () => void;

  constructor(traceId: string, events: readonly AgentEvent[]) {
    this.traceId = traceId;
    this.events = [...events];
    this.logged = this.events.length;
    this.ended = this.events.some(isTerminal);
    this.settled = new Promise<void>((resolve) => (this.settle = resolve));
  }

  /**
   * The run has logged a wait since it was launched: it is letting go of its log to park (a
   * resumed run whose log ends in the wait it was answered is not parking, it is taking the answer).
   */
  get parking(): boolean {
    return !this.ended && this.events.length > this.logged && pendingWait(this.events) !== undefined;
  }

  /** Keeps the event (one already kept, by seq, is left out) and wakes who waits for one. */
  record(event: AgentEvent): void {
    const last = this.events.at(-1);
    if (last !== undefined && event.seq <= last.seq) return;
    this.events.push(event);
    if (isTerminal(event)) this.ended = true;
    this.notify();
  }

  /** Hands a piece of an answer to who follows the run; a follower that throws loses it, not the run. */
  showChunk(chunk: RunLiveMessage): void {
    for (const follower of this.chunkFollowers) {
      try {
        follower(chunk);
      } catch {
        // A live view's failure is its own.
      }
    }
  }

  /** Follows the pieces of the run's answers as they stream until the returned function is called. */
  followChunks(onChunk: (chunk: RunLiveMessage) => void): () => void {
    if (this.ended) return () => undefined;
    this.chunkFollowers.add(onChunk);
    return () => void this.chunkFollowers.delete(onChunk);
  }

  /** Aborts the run: through its handle, or before it has one through the signal its launch was given. */
  abort(reason: string): void {
    if (this.handle) this.handle.abort(reason);
    else this.controller.abort(reason);
  }

  /** Resolves once the run has an event after `afterSeq`, is no longer under way, or `waitMs` passed. */
  changed(afterSeq: number, waitMs: number): Promise<void> {
    if ((this.events.at(-1)?.seq ?? 0) > afterSeq) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.listeners.delete(finish);
        resolve();
      };
      const timer = Number.isFinite(waitMs) ? setTimeout(finish, waitMs) : undefined;
      this.listeners.add(finish);
      void this.settled.then(finish);
    });
  }

  /** Called by the host once the run is over: wakes every waiter. */
  finish(): void {
    this.chunkFollowers.clear();
    this.settle();
    this.notify();
  }

  private notify(): void {
    // Most events have no one waiting: no copy of the listeners for them.
    if (this.listeners.size === 0) return;
    for (const listener of [...this.listeners]) listener();
  }
}
