import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { Storage, Subject } from '../../actors/subjects.js';
import { validators } from '../../contracts/schemas.js';
import { AgentEventType } from '../../events/eventTypes.js';
import { parseTraceEvents } from '../cluster/traceEvent.js';

/** Messages asked for per pull. */
const BATCH = 256;

/**
 * The forks stored in a prefix's trace stream, by the trace id of the run each was forked from
 * (each parent's forks in the order they were made). A fork on a cluster stores its `run.forked`
 * alone on `<prefix>.log.<traceId>.run.forked`, so one consumer filtered on that subject reads
 * every fork and nothing else; a message there that is not a valid `run.forked` of its trace id
 * (the subjects are open to anyone allowed to publish there) is skipped. At most `limit` forks
 * (default 10,000) are read.
 *
 * @example
 * ```ts
 * const forks = await listRunForks(nc, 'redflow');
 * console.log(forks.get(parentTraceId)); // ['9c1e…', …]
 * ```
 */
export async function listRunForks(nc: NatsConnection, prefix: string, limit = 10_000): Promise<Map<string, string[]>> {
  const stream = Storage.traceStream(prefix);
  const jsm = await jetstreamManager(nc);
  const filter = Subject.log(prefix, '*', AgentEventType.RunForked);
  let created;
  try {
    created = await jsm.consumers.add(stream, {
      filter_subject: filter,
      deliver_policy: DeliverPolicy.All,
      ack_policy: AckPolicy.None,
      mem_storage: true,
      num_replicas: 1,
      // Removed by the server soon after, even if this process dies before deleting it.
      inactive_threshold: nanos(30_000),
    });
  } catch (error) {
    // No stream yet: nothing was ever stored under this prefix.
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return new Map();
    throw error;
  }
  const forks = new Map<string, string[]>();
  const traceToken = filter.split('.').indexOf('*');
  try {
    let pending = Math.min(created.num_pending, limit);
    const consumer = jetstream(nc).consumers.getConsumerFromInfo(created);
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(BATCH, pending), expires: 5000 });
      let got = 0;
      for await (const message of batch) {
        got++;
        pending--;
        const traceId = message.subject.split('.')[traceToken];
        const event = parseTraceEvents(message.data)?.[0];
        if (!event || !validators.agentEvent(event) || event.type !== AgentEventType.RunForked || event.traceId !== traceId) continue;
        const parent = event.data.parent.traceId;
        forks.set(parent, [...(forks.get(parent) ?? []), event.traceId]);
      }
      if (got === 0) break;
    }
  } finally {
    await jsm.consumers.delete(stream, created.name).catch(() => undefined);
  }
  return forks;
}
