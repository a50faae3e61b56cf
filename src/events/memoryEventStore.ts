import { ErrorCode, RedflowError } from '../errors.js';
import type { EventStore, ReadResult } from './eventStore.js';
import type { AgentEvent } from './eventTypes.js';

/** An {@link EventStore} kept in process memory, holding any number of runs. */
export interface MemoryEventStore extends EventStore {
  /** The trace ids of the runs that have at least one event, in the order they were started. */
  traces(): string[];
}

const resolved: Promise<void> = Promise.resolve();

/**
 * Creates an in-process event store for tests, benchmarks and single-process runs. It keeps many
 * runs, keyed by `traceId`. It is built for the hot path: `append` neither clones nor validates
 * the event. It only checks that `event.seq` is the next sequence of its run (the first is 1), and
 * rejects with `LOG_CONCURRENT_WRITER` when it is not. Do not mutate an event after appending it.
 *
 * `read` returns a copy of the run's array (the events themselves are shared), with no problems,
 * and rejects with `LOG_NOT_FOUND` for a trace that has no events. `close` does nothing: the events
 * stay readable.
 *
 * @example
 * ```ts
 * const store = createMemoryEventStore();
 * await store.append(startedEvent); // seq 1
 * await store.append(requestedEvent); // seq 2
 * const { events } = await store.read(startedEvent.traceId);
 * store.traces(); // [startedEvent.traceId]
 * ```
 */
export function createMemoryEventStore(): MemoryEventStore {
  const runs = new Map<string, AgentEvent[]>();

  function appendSync(event: AgentEvent): void {
    const log = runs.get(event.traceId);
    // seq is enforced on every append, so a run's last seq is its length.
    const expected = log === undefined ? 1 : log.length + 1;
    if (event.seq !== expected) {
      throw new RedflowError({
        code: ErrorCode.LOG_CONCURRENT_WRITER,
        message: `run ${event.traceId}: expected seq ${expected}, got seq ${event.seq}`,
        hint: 'another writer appended to this run, or the event was appended twice',
      });
    }
    if (log === undefined) runs.set(event.traceId, [event]);
    else log.push(event);
  }

  return {
    append(event: AgentEvent): Promise<void> {
      try {
        appendSync(event);
      } catch (error) {
        return Promise.reject(error);
      }
      return resolved;
    },

    appendSync,

    read(traceId: string): Promise<ReadResult> {
      const log = runs.get(traceId);
      if (log === undefined) {
        return Promise.reject(
          new RedflowError({
            code: ErrorCode.LOG_NOT_FOUND,
            message: `no events for run ${traceId}`,
            hint: 'check the trace id; a memory store only holds the runs of this process',
          }),
        );
      }
      return Promise.resolve({ events: log.slice(), problems: [] });
    },

    close(): Promise<void> {
      return resolved;
    },

    traces(): string[] {
      return [...runs.keys()];
    },
  };
}
