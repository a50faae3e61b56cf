import type { NatsConnection } from '@nats-io/transport-node';
import { Storage } from '../../actors/subjects.js';
import { createNatsKvToolResultStore } from '../kv/natsKvToolResultStore.js';
import { serveTool } from '../../runtime/serveActors.js';
import { serveIdempotentTool } from '../../runtime/serveIdempotentTool.js';
import type { ToolServer } from './actorWorker.js';
import type { BucketReplication } from '../jetstream/replication.js';
import { openPatiently } from './openPatiently.js';

/** Options of {@link idempotentToolServer}. */
export interface IdempotentToolServerOptions {
  /** How long a call whose tool worker died stays claimed before another worker runs it (default 10 s). */
  readonly leaseMs?: number;
  /** Replicas and placement of the tool-results bucket when this server creates it. */
  readonly replication?: BucketReplication;
  /** Where to say that the start waits for the cluster to open the bucket. */
  readonly log?: (line: string) => void;
}

/**
 * The tool server of distributed mode: each tool with effects answers a repeated idempotency key
 * with the result stored in the KV bucket `<prefix>-tool-results` instead of executing again, so a
 * call re-sent after a core worker died has its effect once. A tool declared `idempotent` (a
 * read-only `tool.postgres`, a module tool saying so) is served plainly: keeping its results would
 * cost two KV writes per call to guard a repeat that changes nothing.
 *
 * @example
 * ```ts
 * await startActorWorker({ nc, flowPath, roles: ['tool'], serveTool: await idempotentToolServer(nc, 'redflow') });
 * ```
 */
export async function idempotentToolServer(nc: NatsConnection, prefix: string, options: IdempotentToolServerOptions = {}): Promise<ToolServer> {
  // A cluster still electing or catching up answers with timeouts for a while: wait, saying so.
  const bucket = Storage.toolResultsBucket(prefix);
  const store = await openPatiently(nc, `the tool-results bucket ${bucket}`, () => createNatsKvToolResultStore(nc, { bucket, ...(options.replication && { replication: options.replication }) }), {
    ...(options.log && { log: options.log }),
  });
  // Each call's progress and attachment go out on the run's live subject, for its core worker and followers.
  const serveOptions = { livePrefix: prefix, ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }) };
  return (transport, subject, tool) => (tool.idempotent === true ? serveTool(transport, subject, tool, { livePrefix: prefix }) : serveIdempotentTool(transport, subject, tool, store, serveOptions));
}
