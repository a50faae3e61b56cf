import { ErrorCode, RedflowError } from '../errors.js';
import type { EventStore, FollowOptions, ReadResult } from './eventStore.js';
import { isTerminal, type AgentEvent } from './eventTypes.js';
import { AppendBells, checkFollowCursor } from './follow.js';

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
 * and rejects with `LOG_NOT_FOUND` for a trace that has no events. `follow` hands its followers the
 * appended event objects themselves, woken by the append (no copy, no polling). `close` does
 * nothing: the events stay readable and followable.
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
  /** The followers waiting for a run's next event, by trace id. */
  const appended = new AppendBells();

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
    if (!appended.idle) appended.ring(event.traceId);
  }

  async function* follow(traceId: string, afterSeq: number, options: FollowOptions = {}): AsyncGenerator<AgentEvent> {
    checkFollowCursor(traceId, afterSeq);
    const { signal } = options;
  const stopped = () => signal?.aborted === true;
    // seq is the position in the run's array plus one: the first event to hand over is at afterSeq.
    let next = afterSeq;
    while (!stopped()) {
      const log = runs.get(traceId);
      if (log !== undefined) {
        while (next < log.length) {
          yield log[next++] as AgentEvent;
          if (stopped()) return;
        }
        if (isTerminal(log[log.length - 1] as AgentEvent)) return;
      }
      await appended.wait(traceId, signal);
    }
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

    follow,

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
