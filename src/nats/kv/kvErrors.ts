import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { RedflowError, type ErrorCode } from '../../errors.js';

/** What to do when the server behind a KV bucket cannot be reached. */
export const KV_SERVER_HINT = 'check that nats-server is reachable and runs with JetStream enabled (nats-server -js), then try again';

/** True when a revision-checked KV write lost to another writer. */
export function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * JetStream's error code for a message over the stream's `max_msg_size` (a KV bucket's
 * `maxValueSize`): the server's `JSStreamMessageExceedsMaximumErr`. nats.js's `JetStreamApiCodes`
 * names no constant for it, so it is named here, once.
 */
export const MESSAGE_EXCEEDS_MAXIMUM = 10054;

/** True when a KV write was refused for a value larger than the bucket's `maxValueSize`. */
export function isValueTooLarge(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === MESSAGE_EXCEEDS_MAXIMUM;
}

/** The hint for a failed bucket operation: the bucket is gone, or the server is. */
export function kvBucketHint(bucket: string, error: unknown): string {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound
    ? `the NATS KV bucket ${bucket} no longer exists; create the store again to recreate it`
    : KV_SERVER_HINT;
}

/** A store's failure as a RedflowError with its code, the cause's message appended. */
export function kvFailure(code: ErrorCode, message: string, error: unknown, hint: string, retryable: boolean): RedflowError {
  return new RedflowError(
    { code, message: `${message}: ${error instanceof Error ? error.message : String(error)}`, hint, retryable },
    { cause: error },
  );
}
