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
  /** Resolves once everything recorded so far is appended; rejects if an append failed. */
  settled(): Promise<void>;
  /** The seq of the last recorded event. */
  readonly lastSeq: number;
}

/**
 * Creates the recorder of one run. Appends are chained, so the log order is the machine's order,
 * and effects wait on {@link Recorder.settled}: a tool is only called once its request is logged.
 */
export function createRecorder(options: RecorderOptions): Recorder {
  const { traceId, store, clock, trace, onEvent, onFailure } = options;
  let seq = options.afterSeq ?? 0;
  let chain: Promise<void> = Promise.resolve();
  let failed: ErrorInfo | undefined;

  const deliver = (event: AgentEvent) => {
    if (trace) trace.transport.publish(Subject.trace(trace.prefix, traceId, event.type), event);
    onEvent?.(event);
  };

  return {
    record(fact) {
      seq += 1;
      const event = {
        id: eventId(traceId, seq),
        traceId,
        seq,
        type: fact.type,
        time: new Date(clock.now()).toISOString(),
        iteration: fact.iteration,
        data: fact.data,
      } as AgentEvent;
      chain = chain.then(async () => {
        if (failed) throw new Error(failed.message);
        try {
          await store.append(event);
        } catch (error) {
          failed = toErrorInfo(error, ErrorCode.LOG_CONCURRENT_WRITER);
          onFailure?.(failed);
          throw error;
        }
        deliver(event);
      });
      // Nobody may be waiting right now; the failure is reported through onFailure.
      chain.catch(() => undefined);
    },
    settled: () => chain,
    get lastSeq() {
      return seq;
    },
  };
}
