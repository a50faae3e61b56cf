import { JetStreamApiError, type Placement } from '@nats-io/jetstream';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';

/**
 * How a NATS cluster keeps Redflow's state: the trace stream and every KV bucket of a prefix
 * (runs, leases, tool results, memory). Applied when a stream or bucket is created (the first
 * worker of a prefix creates them); an existing one keeps what it was made with (change it with
 * `nats stream edit <stream> --replicas 3`).
 */
export interface BucketReplication {
  /** Copies of each stream and bucket: 1 (default), 3 or 5; at most the servers in the cluster. */
  readonly replicas?: number;
  /** Place them only on servers with all these tags (`server_tags` in nats-server's config). */
  readonly placementTags?: readonly string[];
}

/** The largest replica count JetStream allows. */
const MAX_REPLICAS = 5;

/**
 * The KV options for `replication` (nothing when none was given: the server's default, one copy).
 *
 * @example
 * ```ts
 * await new Kvm(nc).create('redflow-runs', { history: 1, ...bucketReplication({ replicas: 3 }) });
 * ```
 */
export function bucketReplication(replication: BucketReplication | undefined): { replicas?: number; placement?: Placement } {
  if (replication === undefined) return {};
  checkReplication(replication);
  return {
    ...(replication.replicas !== undefined && { replicas: replication.replicas }),
    ...(replication.placementTags !== undefined && replication.placementTags.length > 0 && { placement: { tags: [...replication.placementTags] } as Placement }),
  };
}

/**
 * The stream configuration for `replication`: `num_replicas` (1 when none was given) and the placement.
 *
 * @example
 * ```ts
 * await jsm.streams.add({ name: 'REDFLOW_TRACE', subjects: ['redflow.trace.>'], ...streamReplication({ replicas: 3 }) });
 * ```
 */
export function streamReplication(replication: BucketReplication | undefined): { num_replicas: number; placement?: Placement } {
  const { replicas, placement } = bucketReplication(replication);
  return { num_replicas: replicas ?? 1, ...(placement !== undefined && { placement }) };
}

/**
 * Refuses a replica count JetStream cannot have (`JETSTREAM_REPLICAS_UNAVAILABLE`).
 *
 * @example
 * ```ts
 * checkReplication({ replicas: 3 });
 * ```
 */
export function checkReplication(replication: BucketReplication): void {
  const { replicas } = replication;
  if (replicas === undefined || (Number.isInteger(replicas) && replicas >= 1 && replicas <= MAX_REPLICAS)) return;
  throw new RedflowError(
    errorInfo(ErrorCode.JETSTREAM_REPLICAS_UNAVAILABLE, `${String(replicas)} is not a replica count: JetStream keeps 1 to ${MAX_REPLICAS} copies`, {
      hint: 'give --replicas 3 (or REDFLOW_REPLICAS=3) on a cluster of three servers or more, 1 on a single server',
    }),
  );
}

/** JetStream's refusals of a placement the cluster cannot give (2.9 and later). */
const REFUSED_PLACEMENT = new Set([
  10074, // replicas > 1 not supported in non-clustered mode
  10023, // insufficient resources
  10005, // no suitable peers for placement
]);

/**
 * `JETSTREAM_REPLICAS_UNAVAILABLE` when `error` is the server refusing `asset`'s replicas or
 * placement (more replicas than servers with JetStream, or than servers with the tags); else
 * undefined.
 *
 * @example
 * ```ts
 * try { await jsm.streams.add(config); } catch (error) { throw replicationRefused('stream REDFLOW_TRACE', { replicas: 3 }, error) ?? error; }
 * ```
 */
export function replicationRefused(asset: string, replication: BucketReplication | undefined, error: unknown): RedflowError | undefined {
  const code = apiErrorCode(error);
  if (code === undefined || !REFUSED_PLACEMENT.has(code)) return undefined;
  const replicas = replication?.replicas ?? 1;
  const tags = replication?.placementTags?.length ? ` tagged ${replication.placementTags.join(', ')}` : '';
  return new RedflowError(
    errorInfo(
      ErrorCode.JETSTREAM_REPLICAS_UNAVAILABLE,
      `the cluster cannot keep ${asset} with ${replicas} replica${replicas === 1 ? '' : 's'}${tags}: ${(error as Error).message}`,
      {
        hint: `give at most as many replicas (--replicas / REDFLOW_REPLICAS) as the cluster has servers with JetStream${tags}, and check they are all up (nats server report jetstream)`,
        retryable: true,
      },
    ),
    { cause: error },
  );
}

/** The JetStream API error code in `error` or its causes, if any. */
function apiErrorCode(error: unknown): number | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof JetStreamApiError) return cause.code;
  }
  return undefined;
}
