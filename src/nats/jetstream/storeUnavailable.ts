import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';

/**
 * `LOG_STORE_UNAVAILABLE` (retryable) for a JetStream read, write or follow that failed: `message`
 * says what could not be done, the cause's message why. A cause that is a Redflow error already
 * says it better, and is kept as it is.
 *
 * @example
 * ```ts
 * try { await js.publish(subject, data); } catch (error) { throw storeUnavailable(`cannot append to ${subject}`, error); }
 * ```
 */
export function storeUnavailable(message: string, cause?: unknown): RedflowError {
  if (cause instanceof RedflowError) return cause;
  const detail = cause === undefined ? '' : `: ${cause instanceof Error ? cause.message : String(cause)}`;
  return new RedflowError(
    errorInfo(ErrorCode.LOG_STORE_UNAVAILABLE, `${message}${detail}`, {
      hint: 'is nats-server running with JetStream (-js) and reachable?',
      retryable: true,
    }),
    ...(cause === undefined ? [] : [{ cause }]),
  );
}
