import type { JetStreamApiCodes } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';

/**
 * JetStream API error code of an account without JetStream: nats.js's
 * `JetStreamApiCodes.JetStreamNotEnabledForAccount`, whose type the compiler holds this value to.
 * Written out rather than imported, so that reading it does not load the JetStream client.
 */
const NOT_ENABLED_FOR_ACCOUNT: (typeof JetStreamApiCodes)['JetStreamNotEnabledForAccount'] = 10039;

/**
 * True when `error`, or an error it was caused by, says the server or the account has no
 * JetStream: the client's `JetStreamNotEnabled` (nothing answers on `$JS.API`) or the API error
 * 10039. Matched by name and code rather than by class, so that commands which never use NATS do
 * not load the JetStream client to ask.
 */
export function isJetStreamNotEnabled(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause.name === 'JetStreamNotEnabled') return true;
    if (cause.name === 'JetStreamApiError' && (cause as { code?: unknown }).code === NOT_ENABLED_FOR_ACCOUNT) return true;
  }
  return false;
}

/**
 * The error to report when JetStream is not enabled: `JETSTREAM_NOT_ENABLED`, saying how to turn
 * it on.
 *
 * @example
 * ```ts
 * if (isJetStreamNotEnabled(error)) throw jetStreamNotEnabledError(error);
 * ```
 */
export function jetStreamNotEnabledError(cause?: unknown): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.JETSTREAM_NOT_ENABLED, 'JetStream is not enabled on the NATS server (or for this account): distributed mode keeps its event log, runs and results there', {
      hint: 'start nats-server with JetStream (`nats-server -js`, or a `jetstream {}` block in its configuration, with `jetstream: enabled` for the account when it has accounts)',
    }),
    { cause },
  );
}

/**
 * Fails with {@link jetStreamNotEnabledError} when the server has no JetStream, before anything
 * depends on it. Any other failure of the check (a user not allowed to ask, say) is left for the
 * operation that needs JetStream to report.
 *
 * @throws RedflowError `JETSTREAM_NOT_ENABLED`
 *
 * @example
 * ```ts
 * await requireJetStream(nc);
 * ```
 */
export async function requireJetStream(nc: NatsConnection): Promise<void> {
  const { jetstreamManager } = await import('@nats-io/jetstream');
  try {
    await jetstreamManager(nc);
  } catch (error) {
    if (isJetStreamNotEnabled(error)) throw jetStreamNotEnabledError(error);
  }
}
