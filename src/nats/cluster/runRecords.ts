import type { RunWait, WaitAnswer } from '../../events/pendingWait.js';

// The run records of a cluster's runs, and what a core worker may do with them (`RunLeases`,
// opened by `openRunLeases` in runLeases.ts).

/** What the cluster knows of a run under way. */
export interface RunRecord {
  readonly traceId: string;
  /** The core worker that owns it. */
  readonly owner: string;
  readonly startedAt: string;
  readonly conversationId?: string;
  /** The run timeout its client asked for, kept for a worker that takes the run over. */
  readonly timeoutMs?: number;
  /**
   * Set while the run is parked, waiting for an answer from outside: no process holds it, so it
   * is no orphan, and the first worker to claim it with an answer (or its deadline) resumes it.
   */
  readonly waiting?: { readonly kind: RunWait['kind']; readonly idempotencyKey: string; readonly deadline: string };
  /**
   * The answer a worker claimed the run with, kept until the run is parked again or ends: a
   * worker that takes the run over after that one died resumes it with this answer.
   */
  readonly answer?: WaitAnswer;
}

/** How a claim of a parked run with an answer went. */
export type AnswerClaim =
  /** This worker owns the run now, with the answer recorded. */
  | { readonly kind: 'claimed'; readonly record: RunRecord }
  /** The run's record says a worker owns it: it is under way, or another answer was taken first. */
  | { readonly kind: 'owned'; readonly owner: string };

/**
 * Which core worker owns which run. Two NATS KV buckets: `<prefix>-runs` holds one record per run
 * under way (its owner), `<prefix>-leases` one heartbeat per live core worker, in a bucket whose
 * entries expire after `leaseMs` unless renewed (the server's clock decides, so workers' clocks
 * need not agree). A worker that dies stops its heartbeat; its entry expires; its runs become
 * orphans, and the first worker whose revision-checked update of a run's record succeeds owns it.
 * One heartbeat per worker, not per run: the cost does not grow with the number of runs.
 *
 * **Outages of the heartbeat bucket.** On a cluster, the bucket is unavailable while its replicas
 * elect a leader (seconds); an election longer than the lease comes back with every heartbeat
 * expired, the live workers' too. So a worker calls an owner dead only once it has seen the
 * owner's heartbeat missing for a full lease with the bucket working all along: any failed read
 * or write of the bucket, or a reconnect of its own connection, starts that lease again. And a
 * worker puts its heartbeat again at once when the bucket works again (a failed beat is retried
 * every 200 ms, and a reconnect beats at once), well inside that lease. The price: a dead
 * worker's runs are taken over between one and two leases after its last beat, not one. A worker
 * that closes deletes its heartbeat: its runs are taken over at once. Finding orphans in a scan
 * and asking about one run (`redflow resume --nats`) judge owners by this one rule.
 */
export interface RunLeases {
  /**
   * The lease in force: the expiry of the heartbeat bucket, which the first core worker of the
   * prefix set when it made the bucket (a later worker's own `leaseMs` cannot change it).
   */
  readonly leaseMs: number;
  /**
   * Records a new run owned by this worker; false if the run is already known. Throws
   * `LOG_STORE_UNAVAILABLE` (retryable) when the bucket does not answer.
   */
  register(record: Omit<RunRecord, 'owner'>): Promise<boolean>;
  /**
   * Takes over an orphan (its owner is dead) by a revision-checked update of its record; false if
   * the record no longer names that owner (another worker was first) or the update loses a race.
   * True if the record names this worker already: a claim may be made again until the run is
   * resumed. Throws when the bucket cannot be read (the claim may have gone through: try again).
   */
  claim(record: RunRecord): Promise<boolean>;
  /** True while the run's record (as last seen) names this worker. */
  owns(traceId: string): boolean;
  /**
   * False only when the run's record, read from the bucket now, names another worker: what to ask
   * before letting a run go that {@link owns} says is lost (the watch may lag, and a run that has
   * just ended has no record left). True when the bucket cannot be read: a second writer of the
   * run's log is refused by the trace stream anyway.
   */
  stillOwns(traceId: string): Promise<boolean>;
  /**
   * The run's record if it names this worker, confirmed by writing it again at the revision read
   * (a read alone may be a stale replica's); undefined if not. Throws when the bucket does not answer.
   */
  mine(traceId: string): Promise<RunRecord | undefined>;
  /** Forgets a finished run. */
  finish(traceId: string): Promise<void>;
  /**
   * The runs under way whose owner's heartbeat this worker has seen missing for a full lease of a
   * working bucket: candidates for takeover (a parked run is none).
   */
  orphans(): Promise<RunRecord[]>;
  /**
   * Run `traceId`'s record if it is an orphan, read from the bucket now rather than from the watch
   * (which may not have caught up yet in a process that has just opened the leases). The same
   * heartbeat rule as {@link RunLeases.orphans}: it watches the owner's heartbeat until it beats
   * (undefined at once) or has been missing for a whole lease of a working bucket (the record), so
   * an answer takes up to a lease, more while the bucket fails; it throws `LOG_STORE_UNAVAILABLE`
   * when the bucket keeps failing for several leases.
   */
  orphan(traceId: string): Promise<RunRecord | undefined>;
  /** Marks one of this worker's runs parked, waiting for an answer: it no longer owns it. */
  park(traceId: string, waiting: NonNullable<RunRecord['waiting']>): Promise<void>;
  /**
   * Claims a parked run (or a run with no record, parked by a process that keeps none) to resume
   * it with `answer`, by a revision-checked write: of two workers claiming one wait, one wins.
   */
  claimForAnswer(traceId: string, answer: WaitAnswer, fallback: Omit<RunRecord, 'owner'>): Promise<AnswerClaim>;
  /** The parked runs, as last seen (for the sweeper of expired waits). */
  parked(): RunRecord[];
  /** Stops the heartbeat (its entry then expires) and the watch. */
  close(): Promise<void>;
}

const decoder = new TextDecoder();

/** A run record as read from the bucket, with its revision. */
export interface ReadRecord {
  readonly record: RunRecord;
  readonly revision: number;
}

/** A run record this worker knows: written by it, or seen by its watch (`record` undefined: not a record of ours). */
export interface KnownRecord {
  readonly record: RunRecord | undefined;
  readonly revision: number;
}

/**
 * A record seen by the watch, read from its bytes on first look: a worker sees every run of the
 * cluster start and end, and most end before anyone looks.
 */
export class WatchedRecord implements KnownRecord {
  readonly revision: number;
  private value: Uint8Array | undefined;
  private read: RunRecord | undefined = undefined;

  constructor(value: Uint8Array, revision: number) {
    this.value = value;
    this.revision = revision;
  }

  get record(): RunRecord | undefined {
    const { value } = this;
    if (value !== undefined) {
      this.value = undefined;
      try {
        this.read = JSON.parse(decoder.decode(value)) as RunRecord;
      } catch {
        // Not a record of ours: leave it alone.
      }
    }
    return this.read;
  }
}
