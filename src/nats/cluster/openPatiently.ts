import type { NatsConnection } from '@nats-io/transport-node';
import { isJetStreamNotEnabled } from '../jetStreamNotEnabled.js';
import { storeUnavailable } from '../jetstream/storeUnavailable.js';

/** How long a worker's start waits for the cluster's JetStream to answer before giving up. */
export const DEFAULT_START_WITHIN_MS = 60_000;

/** Pauses between attempts: short at first (an election takes a second or two), then every 2 s. */
const PAUSES_MS = [250, 500, 1000, 2000] as const;

/**
 * True when `error` may pass by itself: a request that timed out or found no responder (a stream
 * or bucket without a leader yet), or, on a clustered server, JetStream answering 503 (its meta
 * leader not elected yet, or the server still catching up), whether nats.js's own error or the coded one it caused. A server
 * without JetStream at all answers 503 forever: that is only waited for on a cluster. A refusal
 * (a permission, a replica count) is not waited for, even when its code says retryable.
 */
function passing(nc: NatsConnection, error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause.name === 'PermissionViolationError') return false;
    // 503 (10008, "JetStream system temporarily unavailable"): a server still catching up.
    if (cause.name === 'JetStreamApiError') return (cause as { status?: unknown }).status === 503 && !isJetStreamNotEnabled(cause);
    if (/timeout|no ?responders/i.test(cause.name) || /^(timeout|no responders|503)/i.test(cause.message)) return true;
  }
  return clustered(nc) && isJetStreamNotEnabled(error);
}

function clustered(nc: NatsConnection): boolean {
  return typeof nc.info?.cluster === 'string' && nc.info.cluster.length > 0;
}

/**
 * Opens `what` (a worker's stream or buckets) with `open`, trying again while the cluster cannot
 * answer yet: a server that has just restarted, or a stream still electing its leader or catching
 * up, answers JetStream requests with timeouts for seconds. Each failed attempt is logged with its
 * reason, so a waiting start says what it waits for. After `withinMs` the last failure is thrown as
 * `LOG_STORE_UNAVAILABLE` (retryable); a failure that does not pass by itself (a permission, a
 * replica count the cluster cannot have) is thrown at once.
 *
 * @throws RedflowError `LOG_STORE_UNAVAILABLE`, or the failure that cannot pass
 *
 * @example
 * ```ts
 * const store = await openPatiently(nc, 'the trace stream', () => openJetStreamEventStore(nc, { prefix }), { log: console.error });
 * ```
 */
export async function openPatiently<T>(
  nc: NatsConnection,
  what: string,
  open: () => Promise<T>,
  options: { readonly log?: (text: string) => void; readonly withinMs?: number } = {},
): Promise<T> {
  const withinMs = options.withinMs ?? DEFAULT_START_WITHIN_MS;
  const startedAt = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await open();
    } catch (error) {
      const waited = Date.now() - startedAt;
      if (!passing(nc, error)) throw error;
      if (waited >= withinMs || nc.isClosed()) {
        throw storeUnavailable(`cannot open ${what} within ${Math.round(waited / 1000)} s (the NATS cluster did not answer)`, error);
      }
      const pause = PAUSES_MS[Math.min(attempt, PAUSES_MS.length - 1)] as number;
      options.log?.(`waiting for the NATS cluster to open ${what} (${Math.round(waited / 1000)} s so far): ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, withinMs - waited))));
    }
  }
}
