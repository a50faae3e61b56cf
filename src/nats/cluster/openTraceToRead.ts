import { PermissionViolationError, type NatsConnection } from '@nats-io/transport-node';
import { Storage } from '../../actors/subjects.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../jetstream/jetstreamEventStore.js';

/**
 * Opens the trace stream for a client that only reads it (`redflow serve --nats`, `replay`,
 * `inspect`). The store creates the stream when it is missing, which the `client` user of
 * deploy/nats/redflow.conf may not do: a stream that does not exist yet is then reported as such
 * (`LOG_STORE_UNAVAILABLE`, retryable: a core worker creates it), not as a refused permission.
 *
 * @example
 * ```ts
 * const store = await openTraceToRead(nc, 'redflow');
 * const { events } = await store.read(traceId);
 * ```
 */
export async function openTraceToRead(nc: NatsConnection, prefix: string): Promise<JetStreamEventStore> {
  try {
    return await openJetStreamEventStore(nc, { prefix });
  } catch (error) {
    if (!refusedStreamCreation(error)) throw error;
    throw new RedflowError(
      errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `the trace stream ${Storage.traceStream(prefix)} does not exist yet, and this NATS user may not create it`, {
        hint: `start a core worker for the prefix "${prefix}" (redflow worker <flow> --role core): it creates the stream; then try again`,
        retryable: true,
      }),
      { cause: error },
    );
  }
}

/** True when the server refused this user a stream creation (the stream was missing). */
function refusedStreamCreation(error: unknown): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof PermissionViolationError && cause.subject.includes('.STREAM.CREATE.')) return true;
  }
  return false;
}
