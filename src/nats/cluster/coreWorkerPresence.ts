import type { NatsConnection } from '@nats-io/transport-node';
import { DEFAULT_SUBJECT_PREFIX, Subject } from '../../actors/subjects.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { randomIds } from '../../runtime/ids.js';
import { createNatsTransport } from '../natsTransport.js';
import type { RunAbortRequest } from './runAborts.js';

/**
 * The hint of `TRANSPORT_NO_RESPONDER` when no core worker serves a prefix: how to start one.
 * `redflow run --nats` and `redflow fork --nats` say the same.
 *
 * @example
 * ```ts
 * noCoreWorkerHint('orders'); // 'no core worker is running for prefix "orders": start one with …'
 * ```
 */
export function noCoreWorkerHint(prefix: string): string {
  return `no core worker is running for prefix "${prefix}": start one with \`redflow worker <flow> --role core --nats <url>${prefix === DEFAULT_SUBJECT_PREFIX ? '' : ` --prefix ${prefix}`}\`, or check --nats and --prefix`;
}

/** How long a listening core worker may stay silent before the probe counts it as present. */
const PROBE_MS = 250;

/**
 * Throws `TRANSPORT_NO_RESPONDER` (with {@link noCoreWorkerHint}) when no core worker listens on
 * the prefix. Work handed to the core workers without a request (a fork stored for their takeover
 * scan) would otherwise wait forever. The probe is an abort of a trace id nobody owns: every core
 * worker listens to aborts and only a run's owner answers, so the server's "no responders" comes
 * at once when none listens, and silence means one does. Nothing is started or aborted.
 *
 * @throws RedflowError `TRANSPORT_NO_RESPONDER` when no core worker runs for `prefix`.
 *
 * @example
 * ```ts
 * await requireCoreWorker(nc, 'orders'); // throws when `redflow worker … --role core --prefix orders` is not running
 * ```
 */
export async function requireCoreWorker(nc: NatsConnection, prefix: string): Promise<void> {
  const transport = createNatsTransport(nc, { log: () => undefined });
  try {
    const nobody = randomIds.traceId();
    const reply = await transport.request<RunAbortRequest, unknown>(Subject.runAbort(prefix, nobody), { reason: 'is a core worker there?' }, { timeoutMs: PROBE_MS });
    if (!reply.ok && reply.error.code === ErrorCode.TRANSPORT_NO_RESPONDER) {
      throw new RedflowError(errorInfo(ErrorCode.TRANSPORT_NO_RESPONDER, `no core worker listens on ${Subject.runStart(prefix)}`, { retryable: true, hint: noCoreWorkerHint(prefix) }));
    }
  } finally {
    await transport.close();
  }
}
