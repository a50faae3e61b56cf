import { ErrorCode, errorInfo, toErrorInfo } from '../errors.js';
import { NO_HEADERS, createLocalPubSub } from './localPubSub.js';
import type {
  Headers,
  Reply,
  RequestHandler,
  RequestOptions,
  ServeOptions,
  Subscription,
  Transport,
  TransportMessage,
} from './transport.js';

const neverAborted: AbortSignal = new AbortController().signal;
/** How often waiting requests are checked against their timeout. */
const SWEEP_MS = 20;

interface QueueGroup {
  readonly members: RequestHandler<unknown, unknown>[];
  next: number;
}

/**
 * The embedded transport: actors live in this process and are called directly, with NATS's
 * semantics (queue groups share requests round-robin; no responder is an immediate error).
 *
 * @example
 * ```ts
 * const transport = createInProcessTransport();
 * transport.serve('redflow.tool.add', ({ a, b }: { a: number; b: number }) => a + b);
 * const reply = await transport.request('redflow.tool.add', { a: 1, b: 2 }, { timeoutMs: 1000 });
 * ```
 */
export function createInProcessTransport(): Transport {
  // subject → queue name → members. Exact subjects only: services are addressed exactly.
  const services = new Map<string, Map<string, QueueGroup>>();
  const pubsub = createLocalPubSub();
  // Requests waiting for a reply, so close() can end them and the sweeper can time them out.
  const pending = new Map<(reply: Reply<unknown>) => void, { deadline: number; subject: string; timeoutMs: number }>();
  // One coarse timer for all requests instead of a timer per request (two per iteration): it
  // runs while requests wait and stops when none do. Timeouts fire up to SWEEP_MS late.
  let sweeper: ReturnType<typeof setInterval> | undefined;
  const sweep = () => {
    if (pending.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
      return;
    }
    const now = Date.now();
    for (const [settle, request] of pending) {
      if (now >= request.deadline) {
        settle(failure(ErrorCode.TRANSPORT_TIMEOUT, `no reply on ${request.subject} within ${request.timeoutMs} ms`, undefined, true));
      }
    }
  };
  const sweepSoon = () => {
    if (sweeper !== undefined) return;
    sweeper = setInterval(sweep, SWEEP_MS);
    sweeper.unref();
  };
  let closed = false;

  function pick(subject: string): RequestHandler<unknown, unknown> | undefined {
    const groups = services.get(subject);
    if (!groups) return undefined;
    // One member of each queue group would receive a NATS request; the first reply wins, so
    // answering from the first group is equivalent.
    for (const group of groups.values()) {
      if (group.members.length === 0) continue;
      const member = group.members[group.next % group.members.length];
      group.next = (group.next + 1) % group.members.length;
      return member;
    }
    return undefined;
  }

  return {
    request<Req, Res>(subject: string, data: Req, options: RequestOptions): Promise<Reply<Res>> {
      if (closed) return Promise.resolve(failure(ErrorCode.TRANSPORT_CLOSED, 'the transport is closed'));
      const handler = pick(subject);
      if (!handler) {
        return Promise.resolve(
          failure(ErrorCode.TRANSPORT_NO_RESPONDER, `nothing answers on ${subject}`, 'start the actor that serves this subject'),
        );
      }
      // The handler gets the requester's own signal: in one process there is nothing to relay, and
      // no per-request controller to allocate on the loop's hot path.
      const signal = options.signal ?? neverAborted;
      if (signal.aborted) return Promise.resolve(failure(ErrorCode.RUN_ABORTED, 'the request was aborted'));
      let result: unknown;
      try {
        result = handler(data, { subject, headers: options.headers ?? NO_HEADERS, signal });
      } catch (error) {
        return Promise.resolve({ ok: false, error: toErrorInfo(error, ErrorCode.TRANSPORT_BAD_MESSAGE) });
      }
      if (!(result instanceof Promise)) return Promise.resolve({ ok: true, data: result as Res });
      return new Promise<Reply<Res>>((resolve) => {
        const settle = (reply: Reply<unknown>) => {
          if (!pending.delete(settle)) return;
          resolve(reply as Reply<Res>);
        };
        // A handler that outlives its timeout is not cancelled (only the requester's signal does
        // that); its late reply is dropped.
        pending.set(settle, { deadline: Date.now() + options.timeoutMs, subject, timeoutMs: options.timeoutMs });
        sweepSoon();
        (result as Promise<Res>).then(
          (value) => settle({ ok: true, data: value }),
          (error: unknown) => settle({ ok: false, error: toErrorInfo(error, ErrorCode.TRANSPORT_BAD_MESSAGE) }),
        );
      });
    },

    serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Subscription {
      const queue = options?.queue ?? subject;
      let groups = services.get(subject);
      if (!groups) services.set(subject, (groups = new Map()));
      let group = groups.get(queue);
      if (!group) groups.set(queue, (group = { members: [], next: 0 }));
      const member = handler as RequestHandler<unknown, unknown>;
      group.members.push(member);
      const owner = group;
      return {
        unsubscribe() {
          const i = owner.members.indexOf(member);
          if (i >= 0) owner.members.splice(i, 1);
        },
      };
    },

    publish(subject: string, data: unknown, headers?: Headers): void {
      if (!closed) pubsub.publish(subject, data, headers);
    },

    subscribe(pattern: string, handler: (message: TransportMessage) => void): Subscription {
      return pubsub.subscribe(pattern, handler);
    },

    async close(): Promise<void> {
      closed = true;
      for (const settle of [...pending.keys()]) settle(failure(ErrorCode.TRANSPORT_CLOSED, 'the transport closed before the reply'));
      clearInterval(sweeper);
      services.clear();
      pubsub.clear();
    },
  };
}

function failure(code: ErrorCode, message: string, hint?: string, retryable?: boolean): Reply<never> {
  return { ok: false, error: errorInfo(code, message, { hint, retryable }) };
}
