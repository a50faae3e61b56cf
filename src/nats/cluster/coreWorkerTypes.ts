import type { NatsConnection } from '@nats-io/transport-node';
import type { AgentEvent } from '../../events/eventTypes.js';
import type { BucketReplication } from '../jetstream/replication.js';
import type { MicroService } from '../microService.js';

/** Options of `startCoreWorker`. */
export interface CoreWorkerOptions {
  readonly nc: NatsConnection;
  readonly flowPath: string;
  readonly prefix?: string;
  /** This worker's name in leases (default `<host>-<pid>`). */
  readonly owner?: string;
  /** A run whose owner stops renewing is taken over after this long (default 3 s). */
  readonly leaseMs?: number;
  /** How often to look for runs without an owner (default a third of `leaseMs`). */
  readonly scanMs?: number;
  /** Run timeout for runs this worker starts or takes over. */
  readonly timeoutMs?: number;
  /**
   * One model or tool attempt's limit: a call whose worker died is re-sent (same idempotency key)
   * after this long (`redflow worker --attempt-timeout`). A call lost in a NATS reconnect is re-sent
   * at once, and one nobody answers yet is retried with backoff. Default 30 s.
   */
  readonly attemptTimeoutMs?: number;
  readonly log?: (line: string) => void;
  /** Folders besides the flow file's own where the files it names may be (`--allow-files`). */
  readonly allowFiles?: readonly string[];
  /** Called with each event this worker appends (after it is stored). */
  readonly onEvent?: (event: AgentEvent) => void;
  /**
   * Serve run starts and answers as the NATS micro service `redflow-core`, whose endpoints are
   * `runs.start` and `runs.answer.*`, so that `nats micro ls` finds the core workers and
   * `nats micro stats redflow-core` counts their starts. Default true. The subjects and queue
   * groups are the same either way; a connection that may not subscribe to `$SRV.>` serves
   * plainly, and `log` says so.
   */
  readonly microServices?: boolean;
  /** Replicas and placement of the trace stream and the run buckets when this worker creates them. */
  readonly replication?: BucketReplication;
  /**
   * How long the start waits for the cluster to open the trace stream and the run buckets, trying
   * again and logging why (a server restarting, a stream electing its leader), before failing with
   * `LOG_STORE_UNAVAILABLE`. Default 60 s.
   */
  readonly startWithinMs?: number;
}

/** A running core worker. */
export interface CoreWorker {
  readonly owner: string;
  /** Its NATS micro service, when it runs one. */
  readonly service?: Pick<MicroService, 'name' | 'id' | 'calls'>;
  /** The runs this worker owns now. */
  runs(): string[];
  /** Stops taking work, and leaves its runs for other workers to take over. */
  close(): Promise<void>;
}
