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
}

/**
 * Creates the recorder of one run. Events are appended one at a time in the machine's order.
 * A store that appends synchronously (memory) is used without any wait.
 */
export function createRecorder(options: RecorderOptions): Recorder {
  const { traceId, store, clock, trace, onEvent, onFailure } = options;
  let seq = options.afterSeq ?? 0;
  const queue: AgentEvent[] = [];
  let draining: Promise<void> | undefined;
  let failed: ErrorInfo | undefined;
  let failure: Promise<void> | undefined;
  // Events come in bursts within one millisecond: format each millisecond's time once.
  let stampedMs = Number.NaN;
  let stamp = '';

  const deliver = (event: AgentEvent) => {
    if (trace) trace.transport.publish(Subject.trace(trace.prefix, traceId, event.type), event);
    onEvent?.(event);
  };
  const fail = (error: unknown) => {
    failed = toErrorInfo(error, ErrorCode.LOG_CONCURRENT_WRITER);
    failure = Promise.reject(error);
    failure.catch(() => undefined);
    queue.length = 0;
    onFailure?.(failed);
  };
  const drain = async () => {
    while (queue.length > 0 && !failed) {
      const event = queue[0] as AgentEvent;
      try {
        await store.append(event);
      } catch (error) {
        fail(error);
        throw error;
      }
      queue.shift();
      deliver(event);
    }
  };

  return {
    record(fact) {
      seq += 1;
      if (failed) return;
      const now = clock.now();
      if (now !== stampedMs) {
        stampedMs = now;
        stamp = new Date(now).toISOString();
      }
      const event: AgentEvent = {
        id: eventId(traceId, seq),
        traceId,
        seq,
        type: fact.type,
        time: stamp,
        iteration: fact.iteration,
        data: fact.data,
      } as AgentEvent;
      if (!draining && store.appendSync) {
        try {
          store.appendSync(event);
        } catch (error) {
          fail(error);
          return;
        }
        deliver(event);
        return;
      }
      queue.push(event);
      if (!draining) {
        draining = drain().finally(() => {
          draining = undefined;
        });
        // Waiters see the failure through pending(); nobody has to be waiting.
        draining.catch(() => undefined);
      }
    },
    pending: () => failure ?? draining,
    settled: () => (draining ?? Promise.resolve()).catch(() => undefined),
    get lastSeq() {
      return seq;
    },
  };
}
