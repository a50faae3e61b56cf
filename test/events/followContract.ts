import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { EventStore } from '../../src/events/eventStore.js';
import { isTerminal, type AgentEvent } from '../../src/events/eventTypes.js';
import { answer, countingTool, runScripted } from '../support/harness.js';

// What every event store's follow(traceId, afterSeq) promises (see EventStore.follow), run
// against each store by its own spec file: test/events/storeFollow.spec.ts (memory, JSONL) and
// test/nats/jetstreamFollow.int.spec.ts (JetStream, on the real server).

/** A store for one test, holding (at most) the one run the test names. */
export interface FollowedStore {
  readonly store: EventStore;
  /** Appends as a writer of this store does (the JSONL store's is the one holding the file). */
  append(event: AgentEvent): Promise<void>;
  close(): Promise<void>;
}

/** How a spec opens a fresh store for run `traceId`. */
export type OpenFollowedStore = (traceId: string) => Promise<FollowedStore>;

/** A whole run as the statechart records it (two tool calls, then the answer), made once. */
export async function recordedRun(): Promise<readonly AgentEvent[]> {
  const { events } = await runScripted({
    answers: [answer.tool('echo', { text: 'one' }), answer.tool('echo', { text: 'two' }), answer.final('done')],
    tools: [countingTool('echo').tool],
  });
  return events;
}

/** The events of `run` as those of run `traceId`. */
export function asRun(run: readonly AgentEvent[], traceId: string): AgentEvent[] {
  return run.map((event) => ({ ...event, id: `${traceId}:${event.seq}`, traceId }) as AgentEvent);
}

/** Everything the follow yields, until it ends. */
export async function drain(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const got: AgentEvent[] = [];
  for await (const event of events) got.push(event);
  return got;
}

/** Resolves with what `promise` gives, or 'pending' if it has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const seqs = (events: readonly AgentEvent[]) => events.map((event) => event.seq);
let unique = 0;
const traceIdFor = (what: string) => `follow-${what}-${process.pid}-${Date.now().toString(36)}-${++unique}`;

/** The contract, for the store `open` makes. */
export function describeFollowContract(name: string, open: OpenFollowedStore): void {
  describe(`${name}: follow(traceId, afterSeq)`, () => {
    let template: readonly AgentEvent[];

    beforeAll(async () => {
      template = await recordedRun();
      expect(template.length).toBeGreaterThanOrEqual(10);
      expect(isTerminal(template[template.length - 1] as AgentEvent)).toBe(true);
    });

    /** A fresh store holding the first `count` events of a run of its own. */
    async function holding(count: number, what: string) {
      const traceId = traceIdFor(what);
      const run = asRun(template, traceId);
      const opened = await open(traceId);
      for (const event of run.slice(0, count)) await opened.append(event);
      return { ...opened, run, traceId };
    }

    it('should yield the events after a seq in the middle of a finished run, then end', async () => {
      const { store, run, traceId, close } = await holding(template.length, 'middle');
      try {
        const middle = Math.floor(run.length / 2);
        expect(await within(drain(store.follow(traceId, middle)), 5000)).toEqual(run.slice(middle));
      } finally {
        await close();
      }
    });

    it('should yield the whole of a finished run from 0, and nothing from its last seq or past it, ending each time', async () => {
      const { store, run, traceId, close } = await holding(template.length, 'finished');
      try {
        expect(await within(drain(store.follow(traceId, 0)), 5000)).toEqual(run);
        expect(await within(drain(store.follow(traceId, run.length)), 5000)).toEqual([]);
        expect(await within(drain(store.follow(traceId, run.length + 5)), 5000)).toEqual([]);
      } finally {
        await close();
      }
    });

    it('should hand over the events appended while following, in order, without a gap or a repeat, and end after the ending', async () => {
      const { store, run, traceId, append, close } = await holding(3, 'live');
      try {
        const got: AgentEvent[] = [];
        const following = (async () => {
          for await (const event of store.follow(traceId, 1)) got.push(event);
        })();
        // Some appended at once, some while the follower waits, some in a burst.
        await expect.poll(() => got.length, { timeout: 5000 }).toBe(2);
        for (const event of run.slice(3, 6)) {
          await append(event);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await expect.poll(() => got.length, { timeout: 5000 }).toBe(5);
        for (const event of run.slice(6)) await append(event);
        expect(await within(following, 5000)).toBeUndefined();
        expect(seqs(got)).toEqual(seqs(run).slice(1));
        expect(got).toEqual(run.slice(1));
      } finally {
        await close();
      }
    });

    it('should let several followers from different seqs each have their part, once', async () => {
      const { store, run, traceId, append, close } = await holding(2, 'many');
      try {
        const followers = [0, 1, 4].map((afterSeq) => ({ afterSeq, done: drain(store.follow(traceId, afterSeq)) }));
        for (const event of run.slice(2)) await append(event);
        for (const { afterSeq, done } of followers) expect(await within(done, 5000)).toEqual(run.slice(afterSeq));
      } finally {
        await close();
      }
    });

    it('should end without an error when its signal aborts, whether it waits for the next event or has none yet', async () => {
      const { store, run, traceId, close } = await holding(4, 'abort');
      try {
        const controller = new AbortController();
        const got: AgentEvent[] = [];
        const following = (async () => {
          for await (const event of store.follow(traceId, 0, { signal: controller.signal })) got.push(event);
        })();
        await expect.poll(() => got.length, { timeout: 5000 }).toBe(4);
        expect(await within(following, 200)).toBe('pending');
        controller.abort();
        expect(await within(following, 5000)).toBeUndefined();
        expect(got).toEqual(run.slice(0, 4));
        // Aborted before it starts: nothing, at once.
        expect(await within(drain(store.follow(traceId, 0, { signal: AbortSignal.abort() })), 5000)).toEqual([]);
      } finally {
        await close();
      }
    });

    it('should stop when the consumer breaks out of the loop', async () => {
      const { store, run, traceId, close } = await holding(5, 'break');
      try {
        const got: AgentEvent[] = [];
        const loop = (async () => {
          for await (const event of store.follow(traceId, 0)) {
            got.push(event);
            if (got.length === 2) break;
          }
        })();
        expect(await within(loop, 5000)).toBeUndefined();
        expect(got).toEqual(run.slice(0, 2));
      } finally {
        await close();
      }
    });

    it('should wait for a run that has no event yet, and follow it from its first', async () => {
      const { store, run, traceId, append, close } = await holding(0, 'unknown');
      try {
        const following = drain(store.follow(traceId, 0));
        expect(await within(following, 300)).toBe('pending');
        for (const event of run) await append(event);
        expect(await within(following, 5000)).toEqual(run);
      } finally {
        await close();
      }
    });

    it('should refuse an afterSeq that is not a whole number ≥ 0 with LOG_CURSOR_INVALID', async () => {
      const { store, traceId, close } = await holding(1, 'cursor');
      try {
        for (const afterSeq of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
          const error = await drain(store.follow(traceId, afterSeq)).then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
          expect(error).toBeInstanceOf(RedflowError);
          expect((error as RedflowError).code).toBe(ErrorCode.LOG_CURSOR_INVALID);
          expect((error as RedflowError).hint).toMatch(/whole number/);
        }
      } finally {
        await close();
      }
    });
  });
}
