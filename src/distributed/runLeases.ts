import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { Storage } from '../actors/subjects.js';

/** What the cluster knows of a run under way. */
export interface RunRecord {
  readonly traceId: string;
  readonly startedAt: string;
  readonly conversationId?: string;
}

/** A lease held on a run: renew it before `leaseMs` passes or another worker takes the run. */
export interface Lease {
  readonly traceId: string;
  readonly revision: number;
}

/**
 * Which core worker owns which run, in two NATS KV buckets: `<prefix>-runs` lists the runs under
 * way, `<prefix>-leases` holds one entry per owned run in a bucket whose entries expire after
 * `leaseMs` (the server's clock, so workers' clocks need not agree). A worker that dies stops
 * renewing; its lease expires; another worker's `claim` succeeds and it resumes the run.
 */
export interface RunLeases {
  /** Records a new run and takes its lease; false if the run is already known. */
  register(record: RunRecord): Promise<Lease | undefined>;
  /** Takes the lease of a run whose owner is gone; undefined when someone holds it. */
  claim(traceId: string): Promise<Lease | undefined>;
  /** Renews a lease; undefined when it was lost (expired and claimed by another worker). */
  renew(lease: Lease): Promise<Lease | undefined>;
  /** Forgets a finished run. */
  finish(traceId: string): Promise<void>;
  /** The runs under way whose lease has expired: candidates for takeover. */
  orphans(): Promise<RunRecord[]>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Opens (creating if needed) the run and lease buckets of `prefix`.
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
  const kvm = new Kvm(nc);
  let runs: KV;
  let leases: KV;
  try {
    runs = await kvm.create(Storage.runsBucket(options.prefix), { history: 1 });
    leases = await kvm.create(Storage.leasesBucket(options.prefix), { history: 1, ttl: options.leaseMs });
  } catch (error) {
    throw new RedflowError(
      errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `cannot open the run buckets: ${(error as Error).message}`, {
        hint: 'is nats-server running with JetStream (-js)?',
        retryable: true,
      }),
      { cause: error },
    );
  }
  const owner = encoder.encode(JSON.stringify({ owner: options.owner }));

  const take = async (traceId: string): Promise<Lease | undefined> => {
    try {
      return { traceId, revision: await leases.create(traceId, owner) };
    } catch {
      return undefined; // Someone holds it.
    }
  };

  return {
    async register(record) {
      try {
        await runs.create(record.traceId, encoder.encode(JSON.stringify(record)));
      } catch {
        return undefined;
      }
      return take(record.traceId);
    },
    claim: take,
    async renew(lease) {
      try {
        return { traceId: lease.traceId, revision: await leases.update(lease.traceId, owner, lease.revision) };
      } catch {
        return undefined;
      }
    },
    async finish(traceId) {
      await runs.delete(traceId).catch(() => undefined);
      await leases.delete(traceId).catch(() => undefined);
    },
    async orphans() {
      const found: RunRecord[] = [];
      for await (const key of await runs.keys()) {
        const lease = await leases.get(key);
        if (lease && lease.operation === 'PUT') continue;
        const entry = await runs.get(key);
        if (!entry || entry.operation !== 'PUT') continue;
        try {
          found.push(JSON.parse(decoder.decode(entry.value)) as RunRecord);
        } catch {
          // A record that is not ours: leave it alone.
        }
      }
      return found;
    },
  };
}
