import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { pendingWait, type WaitAnswer } from '../events/pendingWait.js';
import { refusalOf, takeAnswer, type AnswerPorts } from './takeAnswer.js';

/** The ports and wording a {@link RunHost} works with. */
export interface RunHostOptions extends AnswerPorts<unknown> {
  /**
   * The events so far of a run under way in this process, or `undefined` when it is not: an
   * answer to a run under way is refused (its wait is being answered, or it waits for nothing).
   * May wait first for a run that has just logged its wait to let go of its log.
   */
  readonly underWay?: (traceId: string) => Promise<readonly AgentEvent[] | undefined> | readonly AgentEvent[] | undefined;
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
 * Owns the answering of a process's waiting runs, once for every host (`redflow serve`, a core
 * worker, Node-RED's agent node, `AgentExecutor`): one answer per wait, judged against the log
 * (see {@link takeAnswer}), a late one turned into the wait's expiry and refused with
 * `WAIT_EXPIRED`, and a timer per parked run that ends its wait at its deadline. Its ports are
 * the run's log (`read`), who owns the run (`ownership`: none in one process, a lease on a
 * cluster) and how the host resumes it (`resume`).
 *
 * @example
 * ```ts
 * const host = new RunHost({ read, resume, closedError: () => new RedflowError(errorInfo(ErrorCode.SERVER_CLOSING, 'closing')) });
 * host.park(traceId, Date.parse(wait.deadline)); // expires the wait at its deadline, unless answered first
 * await host.answer(traceId, { kind: 'approval', approved: true });
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
  private closing = false;
  private readonly startedAt = Date.now();

  constructor(options: RunHostOptions) {
    this.options = options;
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
    const live = await this.options.underWay?.(traceId);
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
      if (Date.now() < this.beatAfter(deadline)) return this.park(traceId, deadline);
      // Taking an answer now: looked at again shortly, in case that answer does not resume the run.
      if (this.answering.has(traceId)) return this.retry(traceId, deadline);
      void this.expire(traceId);
    }, Math.min(Math.max(0, this.beatAfter(deadline) - Date.now()), LONGEST_TIMER_MS));
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

  /** Takes no answer from now on, and ends every timer. */
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
