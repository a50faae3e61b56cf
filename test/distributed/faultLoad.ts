import { readFile } from 'node:fs/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { AgentEventType } from '../../src/events/eventTypes.js';
import type { EventStore } from '../../src/events/eventStore.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';

// The steady load of the cluster fault suite and the checks after each fault: runs started one
// after another at a fixed pace by a client that fails over between the servers, and what must
// hold of every run whose start a core worker acknowledged.

/** A run a core worker acknowledged as started. */
export interface AcknowledgedRun {
  readonly traceId: string;
  /** When the start was sent, and when its acknowledgement came (ms since the epoch). */
  readonly sentAt: number;
  readonly ackAt: number;
}

/** A load under way. */
export interface Load {
  readonly acknowledged: AcknowledgedRun[];
  /** Starts refused or not answered (a coded, retryable error during an election). */
  readonly refused: { code: string; at: number }[];
  /** Stops starting runs; resolves once the starts in flight are answered. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts a run every `everyMs`, at most `inFlight` starts awaiting their acknowledgement at once,
 * named `<name>-<n>`.
 *
 * @example
 * ```ts
 * const load = startLoad(nc, prefix, 'kill-leader', { everyMs: 100 });
 * ```
 */
export function startLoad(nc: NatsConnection, prefix: string, name: string, options: { everyMs: number; inFlight?: number }): Load {
  const acknowledged: AcknowledgedRun[] = [];
  const refused: { code: string; at: number }[] = [];
  const pending = new Set<Promise<void>>();
  let stopped = false;
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      while (pending.size >= (options.inFlight ?? 32) && !stopped) await Promise.race(pending);
      const traceId = `${name}-${n}`;
      const sentAt = Date.now();
      const start = startRemoteRun({ nc, prefix, input: 'go', traceId, startTimeoutMs: 5000 })
        .then((run) => {
          // Followed from the stream afterwards (see waitForEndings): no consumer per run meanwhile.
          run.detach();
          acknowledged.push({ traceId, sentAt, ackAt: Date.now() });
        })
        .catch((error: unknown) => void refused.push({ code: (error as { code?: string }).code ?? String(error), at: Date.now() }))
        .finally(() => pending.delete(start));
      pending.add(start);
      await sleep(options.everyMs);
    }
  })();
  return {
    acknowledged,
    refused,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(pending);
    },
  };
}

/** What the checks found of the acknowledged runs of one fault. */
export interface RunCheck {
  /** Runs whose log has no ending by the deadline. */
  readonly unfinished: string[];
  /** Runs whose log is not whole: a problem, a gap in the seqs, or not exactly one ending. */
  readonly broken: string[];
  /** Runs that were taken over (a `run.resumed` in their log). */
  readonly resumed: number;
}

/**
 * Reads each run's log from the stream until it has ended (or `deadlineMs` passes) and checks it
 * is whole: no problem, seqs 1..n, exactly one ending, and it is the last event.
 *
 * @example
 * ```ts
 * const check = await checkRuns(store, load.acknowledged.map((run) => run.traceId), 60_000);
 * ```
 */
export async function checkRuns(store: EventStore, traceIds: readonly string[], deadlineMs: number): Promise<RunCheck> {
  const deadline = Date.now() + deadlineMs;
  const unfinished: string[] = [];
  const broken: string[] = [];
  let resumed = 0;
  for (const traceId of traceIds) {
    // A read that fails (the stream busy after the fault) says nothing of the run: past the
    // deadline a run is unfinished when its log is read without an ending, or cannot be read 5 times
    // in a row (once, a run that had ended whole was counted unfinished on one failed read).
    for (let failedReads = 0; ; ) {
      const read = await store.read(traceId).catch(() => undefined);
      failedReads = read === undefined ? failedReads + 1 : 0;
      const events = read?.events ?? [];
      const endings = events.filter((event) => event.type === AgentEventType.RunCompleted || event.type === AgentEventType.RunFailed);
      if (read && endings.length > 0) {
        const whole = read.problems.length === 0 && events.every((event, i) => event.seq === i + 1) && endings.length === 1 && events.at(-1) === endings[0];
        if (!whole) broken.push(traceId);
        if (events.some((event) => event.type === AgentEventType.RunResumed)) resumed++;
        break;
      }
      if (Date.now() > deadline && (read !== undefined || failedReads >= 5)) {
        unfinished.push(traceId);
        break;
      }
      await sleep(200);
    }
  }
  return { unfinished, broken, resumed };
}

/**
 * The tool executions recorded in `counterFile` (one idempotency key a line, see
 * test/fixtures/crash/bump.mjs) that happened more than once.
 *
 * @example
 * ```ts
 * expect(await repeatedExecutions(path.join(dir, 'effects.log'))).toEqual([]);
 * ```
 */
export async function repeatedExecutions(counterFile: string): Promise<string[]> {
  const keys = (await readFile(counterFile, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const key of keys) (seen.has(key) ? repeated : seen).add(key);
  return [...repeated];
}
