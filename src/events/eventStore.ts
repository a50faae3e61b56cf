import type { ErrorInfo } from '../errors.js';
import type { AgentEvent } from './eventTypes.js';

/** A problem found while reading a log: the record is reported and never folded. */
export interface LogProblem extends ErrorInfo {
  /** 1-based line (file stores) or sequence number where the problem is. */
  readonly position: number;
}

/** A run's log as read back: the good events in order, and what could not be trusted. */
export interface ReadResult {
  readonly events: readonly AgentEvent[];
  readonly problems: readonly LogProblem[];
}

/** Options of {@link EventStore.follow}. */
export interface FollowOptions {
  /** Ends the iteration (it returns, without an error) once aborted: the way to stop waiting for a run that does not go on. */
  readonly signal?: AbortSignal;
}

/**
 * Where a run's events are appended. One store may hold many runs (memory, JetStream) or one
 * (a JSONL file). `append` resolves once the event is as durable as the store promises; it
 * rejects with `LOG_CONCURRENT_WRITER` when `event.seq` is not the next sequence of its run.
 *
 * @example
 * ```ts
 * const store: EventStore = await openJsonlEventStore('.redflow/runs/run-1.jsonl');
 * const { events, problems } = await store.read('run-1');
 * for await (const event of store.follow('run-1', events.length)) console.log(event.seq, event.type);
 * ```
 */
export interface EventStore {
  append(event: AgentEvent): Promise<void>;
  /**
   * For stores that are durable as soon as the call returns (memory): the same as `append`,
   * throwing instead of rejecting. The recorder uses it to keep the loop free of a wait per event.
   */
  appendSync?(event: AgentEvent): void;
  /**
   * For stores where each append is a round trip (JetStream): appends consecutive events of one
   * run at once, all or none, `events[0].seq` being the run's next sequence. The recorder hands it
   * the events recorded together (no effect between them), so an iteration waits for two
   * acknowledgements rather than four. Rejects like `append`.
   */
  appendMany?(events: readonly AgentEvent[]): Promise<void>;
  read(traceId: string): Promise<ReadResult>;
  /**
   * The run's events with a seq above `afterSeq`, in seq order and each once: those stored, then
   * each new one as it is appended (by this process or another), until the run's ending
   * (`run.completed` / `run.failed`, the last event yielded). A run that has ended at or before
   * `afterSeq` yields nothing and ends at once. The iteration also ends when the consumer leaves
   * it (`break`) or `options.signal` aborts; nothing else ends it, so abort it for a run that may
   * never go on (interrupted, or parked in a wait). `close` does not end it.
   *
   * A trace id with no events yet is waited for (a follower may start before the run does): ask
   * `read` first where an unknown run is an error. A record `read` would report as a problem
   * ends the iteration with that problem's code (`LOG_RECORD_CORRUPT`, `LOG_SEQUENCE_GAP`, …);
   * an `afterSeq` that is not a whole number ≥ 0 with `LOG_CURSOR_INVALID`.
   */
  follow(traceId: string, afterSeq: number, options?: FollowOptions): AsyncIterable<AgentEvent>;
  close(): Promise<void>;
}
