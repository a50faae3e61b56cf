import { createInbox, PermissionViolationError, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** How one request ended, as data (the hot path allocates no Error). */
export type MuxOutcome =
  | { readonly kind: 'reply'; readonly msg: Msg }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'noResponders' }
  /** The server refused to let this connection publish on the subject (or read its inbox). */
  | { readonly kind: 'denied'; readonly reason: string }
  | { readonly kind: 'closed' };

/** Many requests over one inbox subscription. */
export interface RequestMux {
  request(subject: string, payload: Uint8Array, headers: MsgHdrs | undefined, timeoutMs: number): Promise<MuxOutcome>;
  /** Ends every waiting request as `closed` and unsubscribes. */
  close(): void;
}

/** How often waiting requests are checked against their timeout. */
const SWEEP_MS = 20;

/**
 * Request/reply over a single inbox subscription (`<inbox>.<token>`), with timeouts swept by one
 * coarse timer. nats.js's own `request` builds an Error, stack trace and all, for every request,
 * even a successful one; on a busy worker that was a tenth of its time.
 *
 * @example
 * ```ts
 * const mux = createRequestMux(nc);
 * const outcome = await mux.request('redflow.tool.add', bytes, undefined, 5000);
 * ```
 */
export function createRequestMux(nc: NatsConnection): RequestMux {
  // The connection's own reply prefix, so least-privilege permissions on it hold here too.
  const inbox = createInbox((nc as Partial<{ options: { inboxPrefix?: string } }>).options?.inboxPrefix);
  const waiting = new Map<string, { resolve: (outcome: MuxOutcome) => void; deadline: number; subject: string }>();
  let next = 0;
  let sweeper: ReturnType<typeof setInterval> | undefined;
  let closed = false;

  const finish = (token: string, outcome: MuxOutcome) => {
    const entry = waiting.get(token);
    if (!entry) return;
    waiting.delete(token);
    entry.resolve(outcome);
  };
  const sweep = () => {
    if (waiting.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
      return;
    }
    const now = Date.now();
    for (const [token, entry] of waiting) if (now >= entry.deadline) finish(token, { kind: 'timeout' });
  };

  // A refused publish is reported on the connection, not on the request: match it by subject.
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type !== 'error' || !(status.error instanceof PermissionViolationError)) continue;
      const { operation, subject } = status.error;
      for (const [token, entry] of waiting) {
        if ((operation === 'publish' && entry.subject === subject) || (operation === 'subscription' && subject.startsWith(inbox))) {
          finish(token, { kind: 'denied', reason: status.error.message });
        }
      }
    }
  })().catch(() => undefined);

  let subscription: Subscription | undefined;
  const subscribe = () => {
    subscription = nc.subscribe(`${inbox}.*`, {
      callback: (error, msg) => {
        if (error) return;
        const token = msg.subject.slice(inbox.length + 1);
        // The server answers a request nobody listens to with an empty 503 status message.
        if (msg.data.length === 0 && msg.headers?.code === 503) finish(token, { kind: 'noResponders' });
        else finish(token, { kind: 'reply', msg });
      },
    });
  };

  return {
    request(subject, payload, headers, timeoutMs) {
      if (closed || nc.isClosed()) return Promise.resolve({ kind: 'closed' });
      if (!subscription) subscribe();
      const token = (next++).toString(36);
      return new Promise<MuxOutcome>((resolve) => {
        waiting.set(token, { resolve, deadline: Date.now() + timeoutMs, subject });
        if (sweeper === undefined) {
          sweeper = setInterval(sweep, SWEEP_MS);
          sweeper.unref();
        }
        try {
          nc.publish(subject, payload, headers === undefined ? { reply: `${inbox}.${token}` } : { reply: `${inbox}.${token}`, headers });
        } catch {
          finish(token, { kind: 'closed' });
        }
      });
    },
    close() {
      closed = true;
      for (const token of [...waiting.keys()]) finish(token, { kind: 'closed' });
      clearInterval(sweeper);
      subscription?.unsubscribe();
    },
  };
}
