import type { AgentActivityEvent } from './activity.js';

/**
 * A run's activity as an async iterable that any number of readers can go through, each from the
 * run's first event: events are kept until the run is over (a run has few; its chunks are as many
 * as the model's answers have pieces), and a reader waits for the next one or for the end.
 */
export class ActivityFeed implements AsyncIterable<AgentActivityEvent> {
  readonly #events: AgentActivityEvent[] = [];
  #ended = false;
  #wake: (() => void)[] = [];

  /** Adds an event for every reader. Ignored once ended. */
  push(event: AgentActivityEvent): void {
    if (this.#ended) return;
    this.#events.push(event);
    this.#notify();
  }

  /** Ends the feed: readers finish once they have read every event. Idempotent. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** Every event so far. */
  get events(): readonly AgentActivityEvent[] {
    return this.#events;
  }

  #notify(): void {
    const waiting = this.#wake;
    this.#wake = [];
    for (const wake of waiting) wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<AgentActivityEvent> {
    let next = 0;
    for (;;) {
      if (next < this.#events.length) {
        yield this.#events[next] as AgentActivityEvent;
        next += 1;
      } else if (this.#ended) {
        return;
      } else {
        await new Promise<void>((resolve) => this.#wake.push(resolve));
      }
    }
  }
}
