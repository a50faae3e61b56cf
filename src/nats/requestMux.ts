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
  /**
   * Sends one request. `sent`, when given, is called at once with the request's reply subject (what
   * identifies it to the responder, e.g. to cancel it).
   */
  request(
    subject: string,
    payload: Uint8Array,
    headers: MsgHdrs | undefined,
    timeoutMs: number,
    sent?: (replySubject: string) => void,
  ): Promise<MuxOutcome>;
  /** Ends every waiting request as `closed` and unsubscribes. */
  close(): void;
}

/** A request waiting for its reply: what is needed to end it, or to publish it again. */
interface Waiting {
  readonly resolve: (outcome: MuxOutcome) => void;
  readonly deadline: number;
  readonly subject: string;
  readonly payload: Uint8Array;
  readonly headers: MsgHdrs | undefined;
}

/** How often waiting requests are checked against their timeout. */
const SWEEP_MS = 20;

/**
 * Request/reply over a single inbox subscription (`<inbox>.<token>`), with timeouts swept by one
 * coarse timer. nats.js's own `request` builds an Error, stack trace and all, for every request,
 * even a successful one; on a busy worker that was a tenth of its time.
 *
 * **Reconnects.** A request still waiting when the connection comes back from a disconnect may be
 * lost: nats.js drops what was published while disconnected, and the server drops a reply sent to
 * a disconnected client (or everything, when it restarted). So each one is published again at
 * once, same reply subject and deadline, instead of waiting out its timeout; the first reply wins.
 * The responder may thus see a request twice: Redflow's requests carry an idempotency key (tools),
 * a message id (JetStream), or are safe to repeat.
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
  const waiting = new Map<string, Waiting>();
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

  const send = (token: string, entry: Waiting) => {
    const reply = `${inbox}.${token}`;
    try {
      nc.publish(entry.subject, entry.payload, entry.headers === undefined ? { reply } : { reply, headers: entry.headers });
    } catch {
      finish(token, { kind: 'closed' });
    }
  };

  // The connection's events: after a reconnect, what is still waiting is sent again; a refused
  // publish is reported on the connection, not on the request, so it is matched by subject.
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'reconnect') {
        for (const [token, entry] of waiting) send(token, entry);
        continue;
      }
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
        // The server answers a request nobody listens to with an empty 503 status message. nats.js
        // exports no constant or test for it on a message: it checks `code === 503` itself.
        if (msg.data.length === 0 && msg.headers?.code === 503) finish(token, { kind: 'noResponders' });
        else finish(token, { kind: 'reply', msg });
      },
    });
  };

  return {
    request(subject, payload, headers, timeoutMs, sent) {
      if (closed || nc.isClosed()) return Promise.resolve({ kind: 'closed' });
      if (!subscription) subscribe();
      const token = (next++).toString(36);
      return new Promise<MuxOutcome>((resolve) => {
        const entry: Waiting = { resolve, deadline: Date.now() + timeoutMs, subject, payload, headers };
        waiting.set(token, entry);
        if (sweeper === undefined) {
          sweeper = setInterval(sweep, SWEEP_MS);
          sweeper.unref();
        }
        send(token, entry);
        sent?.(`${inbox}.${token}`);
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
