import { ErrorCode, toErrorInfo, type ErrorInfo } from '../errors.js';
import type { EventStore } from '../events/eventStore.js';
import type { AgentEvent, RecordedFact } from '../events/eventTypes.js';
import type { Transport } from '../actors/transport.js';
import { Subject } from '../actors/subjects.js';
import type { Clock } from './clock.js';
import { eventId } from './ids.js';

/** Options of {@link createRecorder}. */
export interface RecorderOptions {
  readonly traceId: string;
  readonly store: EventStore;
  readonly clock: Clock;
  /** The seq of the last event already in the log (0 for a new run). */
  readonly afterSeq?: number;
  /** When set, each appended event is also published on its trace subject. */
  readonly trace?: { readonly transport: Transport; readonly prefix: string };
  /** Called with each event once it is appended, in order. */
  readonly onEvent?: (event: AgentEvent) => void;
  /** Called once if an append fails: the run must stop touching its log. */
  readonly onFailure?: (error: ErrorInfo) => void;
}

/** Turns the machine's facts into stamped, appended, published events, strictly in order. */
export interface Recorder {
  record(fact: RecordedFact): void;
  /**
   * `undefined` when everything recorded so far is in the log; otherwise a promise that resolves
   * once it is, or rejects if an append failed. Effects wait on it: a tool is only called once
   * its request is logged.
   */
  pending(): Promise<void> | undefined;
  /** Resolves once everything recorded so far is appended (never rejects). */
  settled(): Promise<void>;
  /** The seq of the last recorded event. */
  readonly lastSeq: number;
  /** The last event appended to the log, once one is. */
  readonly lastEvent: AgentEvent | undefined;
}

/**
 * Creates the recorder of one run. Events are appended in the machine's order, one append at a
 * time. A store that appends synchronously (memory) is used without any wait. A store that can
 * append several events at once (JetStream's `appendMany`) is given, in each append, every event
 * recorded since the last one: the events one step of the statechart records (a model's answer and
 * the tool request it makes) are recorded in one go, so they travel in one write, and the effect
 * that follows waits for one acknowledgement, not two. Effects still wait for everything recorded
 * before them to be in the log (`pending`).
 */
export function createRecorder(options: RecorderOptions): Recorder {
  return new RunRecorder(options);
}

/**
 * The recorder as a class: one object per run, its methods shared by every run (a run that waits
 * holds its recorder, so per-run closures would be memory held by every idle run).
 */
class RunRecorder implements Recorder {
  private readonly options: RecorderOptions;
  private seq: number;
  private readonly queue: AgentEvent[] = [];
  private draining: Promise<void> | undefined = undefined;
  private failed: ErrorInfo | undefined = undefined;
  private failure: Promise<void> | undefined = undefined;
  // Events come in bursts within one millisecond: format each millisecond's time once.
  private stampedMs = Number.NaN;
  private stamp = '';
  private last: AgentEvent | undefined = undefined;

  constructor(options: RecorderOptions) {
    this.options = options;
    this.seq = options.afterSeq ?? 0;
  }

  get lastSeq(): number {
    return this.seq;
  }

  get lastEvent(): AgentEvent | undefined {
    return this.last;
  }

  record(fact: RecordedFact): void {
    this.seq += 1;
    if (this.failed) return;
    const { traceId, store, clock } = this.options;
    const now = clock.now();
    if (now !== this.stampedMs) {
      this.stampedMs = now;
      this.stamp = new Date(now).toISOString();
    }
    const seq = this.seq;
    const event = { id: eventId(traceId, seq), traceId, seq, type: fact.type, time: this.stamp, iteration: fact.iteration, data: fact.data } as AgentEvent;
    if (!this.draining && store.appendSync) {
      try {
        store.appendSync(event);
      } catch (error) {
        this.fail(error);
        return;
      }
      this.deliver(event);
      return;
    }
    this.queue.push(event);
    if (!this.draining) {
      // drain() clears `draining` itself as it ends (always after its first await, so after this).
      const draining = this.drain();
      // Waiters see the failure through pending(); nobody has to be waiting.
      draining.catch(() => undefined);
      this.draining = draining;
    }
  }

  pending(): Promise<void> | undefined {
    return this.failure ?? this.draining;
  }

  settled(): Promise<void> {
    return (this.draining ?? Promise.resolve()).catch(() => undefined);
  }

  private deliver(event: AgentEvent): void {
    this.last = event;
    const { trace, onEvent, traceId } = this.options;
    if (trace) trace.transport.publish(Subject.trace(trace.prefix, traceId, event.type), event);
    onEvent?.(event);
  }

  private fail(error: unknown): void {
    const failed = toErrorInfo(error, ErrorCode.LOG_CONCURRENT_WRITER);
    this.failed = failed;
    const failure = Promise.reject(error);
    failure.catch(() => undefined);
    this.failure = failure;
    this.queue.length = 0;
    this.options.onFailure?.(failed);
  }

  private async drain(): Promise<void> {
    // The rest of the statechart's step is recorded before this microtask: it goes in the same write.
    await undefined;
    const { queue } = this;
    const { appendMany } = this.options.store;
    try {
      while (queue.length > 0 && !this.failed) {
        // Every event recorded since the last write, in one write when the store can; else the first.
        const events = appendMany !== undefined ? queue.splice(0, queue.length) : [queue[0] as AgentEvent];
        try {
          if (appendMany !== undefined) await appendMany.call(this.options.store, events);
          else await this.options.store.append(events[0] as AgentEvent);
        } catch (error) {
          this.fail(error);
          throw error;
        }
        if (appendMany === undefined) queue.shift();
        for (const event of events) this.deliver(event);
      }
    } finally {
      this.draining = undefined;
    }
  }
}
