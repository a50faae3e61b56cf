import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { pendingWait, type WaitAnswer } from '../events/pendingWait.js';
import { isRunWaiting } from '../runtime/runWaitingError.js';
import { LiveRun, type LaunchedRun, type LaunchPorts } from './liveRuns.js';
import { refusalOf, takeAnswer, type AnswerPorts } from './takeAnswer.js';

/** The ports and wording a {@link RunHost} works with. */
export interface RunHostOptions extends AnswerPorts<unknown> {
  /** Told when a run launched here fails (not when it ends, stops or parks): for the host's log. */
  readonly onRunError?: (traceId: string, error: unknown) => void;
  /** The refusal of an answer once the host is closing. */
  readonly closedError: () => RedflowError;
  /** Where a refused answer is told to look for what the run waits for. */
  readonly busyHint?: (traceId: string) => string;
  /** How to answer in time, said with `WAIT_EXPIRED`. */
  readonly expiredHint?: string;
  /** Told when a wait's expiry fails for another reason than the wait being answered or ended meanwhile. */
  readonly onExpireError?: (traceId: string, error: unknown) => void;
  /** How long a timer that finds its run busy waits before it looks again (default 1 s). */
  readonly retryMs?: number;
  /**
   * Ends waits on a beat instead of at their deadlines: at the first beat, every `tickMs` from the
   * host's start, at or after the deadline (as `redflow serve`'s sweeper always has). Default: at the deadline.
   */
  readonly tickMs?: number;
}

/** setTimeout takes at most about 24.8 days: a later deadline is looked at again then. */
const LONGEST_TIMER_MS = 2_000_000_000;

/**
 * Owns the life of a process's runs, once for every host (`redflow serve`, a core worker,
 * Node-RED's agent node): the runs under way here ({@link RunHost.launch}, with their events,
 * their abort and their end), the answer to a parked run's wait (one answer per wait, judged
 * against the log, see {@link takeAnswer}; a late one turned into the wait's expiry and refused
 * with `WAIT_EXPIRED`), a timer per parked run that ends its wait at its deadline, and the stop of
 * every run when the host closes. Its ports are the run's log (`read`), who owns the run
 * (`ownership`: none in one process, a lease on a cluster), how the host resumes it (`resume`)
 * and the clock (`now`).
 *
 * @example
 * ```ts
 * const host = new RunHost({ read, resume, closedError: () => new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'closing')) });
 * await host.launch(traceId, ({ signal, record }) => launchIt({ signal, onEvent: record })); // parks it when it waits
 * await host.answer(traceId, { kind: 'approval', approved: true }); // resumes it through `resume`
 * await host.abort(traceId, 'no longer needed');
 * ```
 */
export class RunHost {
  private readonly options: RunHostOptions;
  /** Runs whose answer is being taken, before they are under way again. */
  private readonly answering = new Set<string>();
  /** The timer of each parked run, which ends its wait at its deadline. */
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** The deadline of each run parked here (its timer may have fired): a failed answer parks it again. */
  private readonly parked = new Map<string, number>();
  /** The runs under way here. */
  private readonly runs = new Map<string, LiveRun>();
  private closing = false;
  private readonly now: () => number;
  private readonly startedAt: number;

  constructor(options: RunHostOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
  }

  /** The run if it is under way here. */
  live(traceId: string): LiveRun | undefined {
    return this.runs.get(traceId);
  }

  /** The trace ids of the runs under way here. */
  running(): string[] {
    return [...this.runs.keys()];
  }

  /**
   * Runs `launch` as a run under way here from now (with `events`, its log so far, when it
   * resumes) until `finished` settles: its events are kept as it records them, an abort reaches
   * it (before its handle exists through `signal`), and when `finished` rejects with the wait it
   * parked in, a timer ends that wait at its deadline (a cluster resolves `finished` instead, its
   * parked runs kept in their records). A launch that throws leaves nothing here.
   */
  async launch(traceId: string, launch: (ports: LaunchPorts) => LaunchedRun | Promise<LaunchedRun>, events: readonly AgentEvent[] = []): Promise<LiveRun> {
    if (this.closing) throw this.options.closedError();
    const run = new LiveRun(traceId, events);
    this.runs.set(traceId, run);
    let launched: LaunchedRun;
    try {
      launched = await launch({ signal: run.controller.signal, record: (event) => run.record(event), showChunk: (chunk) => run.showChunk(chunk) });
    } catch (error) {
      this.forget(run);
      throw error;
    }
    run.handle = launched.handle;
    if (run.controller.signal.aborted) launched.handle.abort(String(run.controller.signal.reason));
    launched.finished
      .catch((error: unknown) => {
        // Parked: the log holds the wait, and no memory here holds the run.
        if (isRunWaiting(error)) this.park(traceId, Date.parse(error.wait.deadline));
        else if (!(error instanceof RedflowError && error.code === ErrorCode.RUN_STOPPED)) {
          try {
            this.options.onRunError?.(traceId, error);
          } catch {
            // A failing report must not leave the run's bookkeeping undone.
          }
        }
      })
      .finally(() => this.forget(run));
    return run;
  }

  /**
   * Aborts a run: one under way here at once, one parked in its log by taking the abort as the
   * answer to its wait. `'finished'` when it has ended, `'unknown'` when there is no such run.
   */
  async abort(traceId: string, reason: string): Promise<'aborting' | 'finished' | 'unknown'> {
    const run = this.runs.get(traceId);
    if (run?.parking === true) await run.settled;
    else if (run !== undefined) {
      if (run.ended) return 'finished';
      run.abort(reason);
      return 'aborting';
    }
    const events = await this.options.read(traceId);
    if (events === undefined) return 'unknown';
    if (pendingWait(events) === undefined) return 'finished';
    await this.answer(traceId, { kind: 'abort', reason });
    return 'aborting';
  }

  /**
   * Ends every run under way here, and resolves once each has let go of its log: `abort` ends
   * them `aborted`; without it they stop unrecorded and go on where they are resumed.
   */
  async endRuns(how: { readonly abort: string } | 'stop'): Promise<void> {
    const runs = [...this.runs.values()];
    for (const run of runs) {
      if (how === 'stop') run.handle?.stop();
      else if (!run.ended) run.abort(how.abort);
    }
    await Promise.all(runs.map((run) => run.settled));
  }

  private forget(run: LiveRun): void {
    if (this.runs.get(run.traceId) === run) this.runs.delete(run.traceId);
    run.finish();
  }

  /**
   * The events of a run under way here, or `undefined`: an answer to a run under way is refused
   * (its wait is being answered, or it waits for nothing). A run that has just logged its wait
   * is waited for while it lets go of its log, and the answer then finds it parked.
   */
  private async underWay(traceId: string): Promise<readonly AgentEvent[] | undefined> {
    const run = this.runs.get(traceId);
    if (run?.parking === true) await run.settled;
    return this.runs.get(traceId)?.events;
  }

  /** True while an answer to the run's wait is being taken here. */
  isAnswering(traceId: string): boolean {
    return this.answering.has(traceId);
  }

  /**
   * Answers the wait of a run parked in its log, and resumes it here. `'unknown'` when there is no
   * such run.
   *
   * @throws RedflowError `RUN_ALREADY_FINISHED`, `RUN_NOT_WAITING`, `WAIT_ALREADY_ANSWERED` (also
   *   while the run is under way here or taking another answer), `WAIT_ANSWER_MISMATCH`;
   *   `WAIT_EXPIRED` past the wait's deadline (the run has then taken the expiry and ends blocked).
   */
  async answer(traceId: string, answer: WaitAnswer): Promise<'answered' | 'unknown'> {
    if (this.closing) throw this.options.closedError();
    const live = await this.underWay(traceId);
    if (live !== undefined || this.answering.has(traceId)) {
      // Under way here: the answer may not fit at all, or the wait's answer is being taken now.
      const verdict = live === undefined ? undefined : refusalOf(live, answer);
      if (verdict !== undefined) throw verdict;
      throw new RedflowError(
        errorInfo(ErrorCode.WAIT_ALREADY_ANSWERED, `run ${traceId} is taking an answer to its wait already; a wait takes one answer`, {
          hint: this.options.busyHint?.(traceId) ?? 'its events show what it waits for once it is parked again',
        }),
      );
    }
    this.answering.add(traceId);
    let judged: readonly AgentEvent[] | undefined;
    try {
      const read = this.options.read;
      const taken = await takeAnswer(
        traceId,
        answer,
        {
          ...this.options,
          read: async (id) => (judged = await read(id)),
        },
        this.options.expiredHint,
      );
      if (taken === undefined) return 'unknown';
      this.unpark(traceId);
      if (taken.late) throw taken.late;
      return 'answered';
    } catch (error) {
      // Not resumed (the flow is gone, another process answered first): the run stays as its log says.
      const still = judged && this.parked.has(traceId) && !(error instanceof RedflowError && error.code === ErrorCode.WAIT_EXPIRED) ? pendingWait(judged) : undefined;
      if (still !== undefined && !this.timers.has(traceId)) this.park(traceId, Date.parse(still.deadline));
      throw error;
    } finally {
      this.answering.delete(traceId);
    }
  }

  /**
   * Ends a run's wait now (its deadline passed): a wait answered, ended or taken meanwhile is left
   * alone; any other failure goes to `onExpireError`.
   */
  async expire(traceId: string): Promise<void> {
    try {
      await this.answer(traceId, { kind: 'expire' });
    } catch (error) {
      const { code } = toErrorInfo(error, ErrorCode.LOG_STORE_UNAVAILABLE);
      if (code === ErrorCode.RUN_NOT_WAITING || code === ErrorCode.WAIT_ALREADY_ANSWERED || code === ErrorCode.RUN_ALREADY_FINISHED) return;
      if (this.closing && code === this.options.closedError().code) return;
      this.options.onExpireError?.(traceId, error);
    }
  }

  /** Ends the run's wait at `deadline` (ms) unless it is answered first; replaces the run's earlier timer. */
  park(traceId: string, deadline: number): void {
    this.unpark(traceId);
    if (this.closing || !Number.isFinite(deadline)) return;
    this.parked.set(traceId, deadline);
    const timer = setTimeout(() => {
      this.timers.delete(traceId);
      if (this.now() < this.beatAfter(deadline)) return this.park(traceId, deadline);
      // Taking an answer now: looked at again shortly, in case that answer does not resume the run.
      if (this.answering.has(traceId)) return this.retry(traceId, deadline);
      void this.expire(traceId);
    }, Math.min(Math.max(0, this.beatAfter(deadline) - this.now()), LONGEST_TIMER_MS));
    timer.unref?.();
    this.timers.set(traceId, timer);
  }

  /** When a wait with this deadline is ended: at it, or at the first beat after it. */
  private beatAfter(deadline: number): number {
    const { tickMs } = this.options;
    if (tickMs === undefined || tickMs <= 0) return deadline;
    return this.startedAt + Math.ceil(Math.max(0, deadline - this.startedAt) / tickMs) * tickMs;
  }

  /** Forgets the run's timer (it was answered, or is not parked here any more). */
  unpark(traceId: string): void {
    clearTimeout(this.timers.get(traceId));
    this.timers.delete(traceId);
    this.parked.delete(traceId);
  }

  /** Takes no answer and launches no run from now on, and ends every timer ({@link RunHost.endRuns} ends the runs). */
  close(): void {
    this.closing = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.parked.clear();
  }

  private retry(traceId: string, deadline: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(traceId);
      if (!this.answering.has(traceId)) this.park(traceId, deadline);
      else this.retry(traceId, deadline);
    }, this.options.retryMs ?? 1000);
    timer.unref?.();
    this.timers.set(traceId, timer);
  }
}
