import { ErrorCode, errorInfo, toErrorInfo } from '../errors.js';
import { subjectMatches } from './subjectMatch.js';
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

const noHeaders: Headers = Object.freeze({});

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
  const subscriptions = new Set<{ pattern: string; handler: (message: TransportMessage) => void }>();
  const inFlight = new Set<AbortController>();
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
      if (options.signal?.aborted) return Promise.resolve(failure(ErrorCode.RUN_ABORTED, 'the request was aborted'));
      const controller = new AbortController();
      inFlight.add(controller);
      return new Promise<Reply<Res>>((resolve) => {
        let settled = false;
        const settle = (reply: Reply<Res>) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          inFlight.delete(controller);
          if (!reply.ok) controller.abort();
          resolve(reply);
        };
        const onAbort = () => settle(failure(ErrorCode.RUN_ABORTED, 'the request was aborted'));
        const timer = setTimeout(
          () => settle(failure(ErrorCode.TRANSPORT_TIMEOUT, `no reply on ${subject} within ${options.timeoutMs} ms`, undefined, true)),
          options.timeoutMs,
        );
        options.signal?.addEventListener('abort', onAbort, { once: true });
        controller.signal.addEventListener('abort', () => settle(failure(ErrorCode.TRANSPORT_CLOSED, 'the transport is closed')), {
          once: true,
        });
        try {
          Promise.resolve(
            handler(data, { subject, headers: options.headers ?? noHeaders, signal: controller.signal }),
          ).then(
            (result) => settle({ ok: true, data: result as Res }),
            (error: unknown) => settle({ ok: false, error: toErrorInfo(error, ErrorCode.TRANSPORT_BAD_MESSAGE) }),
          );
        } catch (error) {
          settle({ ok: false, error: toErrorInfo(error, ErrorCode.TRANSPORT_BAD_MESSAGE) });
        }
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
      if (closed || subscriptions.size === 0) return;
      const message: TransportMessage = { subject, data, headers: headers ?? noHeaders };
      for (const subscription of subscriptions) {
        if (!subjectMatches(subscription.pattern, subject)) continue;
        // Delivered asynchronously, as over a network: a subscriber never runs inside the publisher.
        queueMicrotask(() => {
          if (subscriptions.has(subscription)) subscription.handler(message);
        });
      }
    },

    subscribe(pattern: string, handler: (message: TransportMessage) => void): Subscription {
      const subscription = { pattern, handler };
      subscriptions.add(subscription);
      return { unsubscribe: () => void subscriptions.delete(subscription) };
    },

    async close(): Promise<void> {
      closed = true;
      for (const controller of inFlight) controller.abort();
      inFlight.clear();
      services.clear();
      subscriptions.clear();
    },
  };
}

function failure(code: ErrorCode, message: string, hint?: string, retryable?: boolean): Reply<never> {
  return { ok: false, error: errorInfo(code, message, { hint, retryable }) };
}
