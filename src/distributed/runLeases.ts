import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { Storage } from '../actors/subjects.js';

/** What the cluster knows of a run under way. */
export interface RunRecord {
  readonly traceId: string;
  /** The core worker that owns it. */
  readonly owner: string;
  readonly startedAt: string;
  readonly conversationId?: string;
  /** The run timeout its client asked for, kept for a worker that takes the run over. */
  readonly timeoutMs?: number;
}

/**
 * Which core worker owns which run. Two NATS KV buckets: `<prefix>-runs` holds one record per run
 * under way (its owner), `<prefix>-leases` one heartbeat per live core worker, in a bucket whose
 * entries expire after `leaseMs` unless renewed (the server's clock decides, so workers' clocks
 * need not agree). A worker that dies stops its heartbeat; its entry expires; its runs become
 * orphans, and the first worker whose revision-checked update of a run's record succeeds owns it.
 * One heartbeat per worker, not per run: the cost does not grow with the number of runs.
 */
export interface RunLeases {
  /**
   * The lease in force: the expiry of the heartbeat bucket, which the first core worker of the
   * prefix set when it made the bucket (a later worker's own `leaseMs` cannot change it).
   */
  readonly leaseMs: number;
  /** Records a new run owned by this worker; false if the run is already known. */
  register(record: Omit<RunRecord, 'owner'>): Promise<boolean>;
  /** Takes over an orphan (its owner is dead); false if another worker was first. */
  claim(record: RunRecord): Promise<boolean>;
  /** True while the run's record (as last seen) names this worker. */
  owns(traceId: string): boolean;
  /** Forgets a finished run. */
  finish(traceId: string): Promise<void>;
  /** The runs under way whose owner has no heartbeat: candidates for takeover. */
  orphans(): Promise<RunRecord[]>;
  /** Stops the heartbeat (its entry then expires) and the watch. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/**
 * Opens (creating if needed) the run and heartbeat buckets of `prefix`, starts this worker's
 * heartbeat, and watches the run records.
 *
 * @example
 * ```ts
 * const leases = await openRunLeases(nc, { prefix: 'redflow', owner: 'core-1', leaseMs: 3000 });
 * ```
 */
export async function openRunLeases(
  nc: NatsConnection,
  options: { prefix: string; owner: string; leaseMs: number },
): Promise<RunLeases> {
  const { owner } = options;
  const kvm = new Kvm(nc);
  let runs: KV;
  let leases: KV;
  let leaseMs: number;
  try {
    runs = await kvm.create(Storage.runsBucket(options.prefix), { history: 1 });
    leases = await kvm.create(Storage.leasesBucket(options.prefix), { history: 1, ttl: options.leaseMs });
    // An existing bucket keeps the expiry it was made with: heartbeat at its pace, not ours, or a
    // longer lease of ours would let our heartbeat expire between beats.
    const ttl = (await leases.status()).ttl;
    leaseMs = ttl > 0 ? ttl : options.leaseMs;
    await leases.put(owner, encoder.encode(JSON.stringify({ owner, since: new Date().toISOString() })));
  } catch (error) {
    throw new RedflowError(
      errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `cannot open the run buckets: ${(error as Error).message}`, {
        hint: 'is nats-server running with JetStream (-js)?',
        retryable: true,
      }),
      { cause: error },
    );
  }

  // Every run record, kept current by a watch: finding orphans reads no run from the server.
  const known = new Map<string, { record: RunRecord; revision: number }>();
  const watch = await runs.watch();
  void (async () => {
    for await (const entry of watch) {
      if (entry.operation !== 'PUT') {
        known.delete(entry.key);
        continue;
      }
      try {
        known.set(entry.key, { record: entry.json<RunRecord>(), revision: entry.revision });
      } catch {
        // Not a record of ours: leave it alone.
      }
    }
  })();

  const heartbeat = setInterval(() => {
    void leases.put(owner, encoder.encode(JSON.stringify({ owner, at: new Date().toISOString() }))).catch(() => undefined);
  }, Math.max(100, Math.floor(leaseMs / 3)));
  heartbeat.unref();

  const liveOwners = async (): Promise<Set<string>> => {
    const live = new Set<string>();
    for await (const key of await leases.keys()) live.add(key);
    return live;
  };

  return {
    leaseMs,
    async register(partial) {
      const record: RunRecord = { ...partial, owner };
      try {
        const revision = await runs.create(record.traceId, encoder.encode(JSON.stringify(record)));
        known.set(record.traceId, { record, revision });
        return true;
      } catch {
        return false;
      }
    },
    async claim(record) {
      const seen = known.get(record.traceId);
      if (!seen) return false;
      const mine: RunRecord = { ...seen.record, owner };
      try {
        const revision = await runs.update(record.traceId, encoder.encode(JSON.stringify(mine)), seen.revision);
        known.set(record.traceId, { record: mine, revision });
        return true;
      } catch {
        return false;
      }
    },
    owns: (traceId) => known.get(traceId)?.record.owner === owner,
    async finish(traceId) {
      known.delete(traceId);
      await runs.delete(traceId).catch(() => undefined);
    },
    async orphans() {
      if (known.size === 0) return [];
      const live = await liveOwners();
      return [...known.values()].map((entry) => entry.record).filter((record) => record.owner !== owner && !live.has(record.owner));
    },
    async close() {
      clearInterval(heartbeat);
      watch.stop();
      await leases.delete(owner).catch(() => undefined);
    },
  };
}
