import type { NatsConnection } from '@nats-io/transport-node';
import { isJetStreamNotEnabled } from '../jetStreamNotEnabled.js';
import { storeUnavailable } from '../jetstream/storeUnavailable.js';

/** How long a worker's start waits for the cluster's JetStream to answer before giving up. */
export const DEFAULT_START_WITHIN_MS = 60_000;

/** Pauses between attempts: short at first (an election takes a second or two), then every 2 s. */
const PAUSES_MS = [250, 500, 1000, 2000] as const;

/**
 * True when `error` may pass by itself, whether nats.js's own error or the coded one it caused: a
 * request that timed out, or, on a clustered server, one that found no responder or a 503 (a
 * stream or bucket without a leader yet, the meta leader not elected, a server catching up). A
 * single server without JetStream answers so forever: that is not waited for. A refusal (a
 * permission, a replica count) is not waited for, even when its code says retryable.
 */
function passing(nc: NatsConnection, error: unknown): boolean {
  // Checked first: nats.js says "not enabled" for a JetStream API nobody answers (no responders).
  if (isJetStreamNotEnabled(error)) return clustered(nc);
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause.name === 'PermissionViolationError') return false;
    // 503 (10008, "JetStream system temporarily unavailable"): a server still catching up.
    if (cause.name === 'JetStreamApiError') return (cause as { status?: unknown }).status === 503;
    if (/timeout/i.test(cause.name) || /^timeout/i.test(cause.message)) return true;
    // No responders on a single server is JetStream off, not an election.
    if (/no ?responders/i.test(cause.name) || /^(no responders|503)/i.test(cause.message)) return clustered(nc);
  }
  return false;
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
