import { subjectMatches } from './subjectMatch.js';
import type { Headers, Subscription, TransportMessage } from './transport.js';

/** Headers of a message published without any. */
export const NO_HEADERS: Headers = Object.freeze({});

/**
 * Publish/subscribe within one process, as the in-process transports offer it: every subscription
 * whose pattern matches a subject gets the message, asynchronously, as over a network (a
 * subscriber never runs inside the publisher), and not after it unsubscribed.
 */
export interface LocalPubSub {
  publish(subject: string, data: unknown, headers?: Headers): void;
  subscribe(pattern: string, handler: (message: TransportMessage) => void): Subscription;
  /** Drops every subscription (the transport closes). */
  clear(): void;
}

/**
 * The pub/sub half of an in-process transport.
 *
 * @example
 * ```ts
 * const pubsub = createLocalPubSub();
 * pubsub.subscribe('redflow.trace.>', ({ subject }) => console.log(subject));
 * pubsub.publish('redflow.trace.t1.run.started', event);
 * ```
 */
export function createLocalPubSub(): LocalPubSub {
  const subscriptions = new Set<{ pattern: string; handler: (message: TransportMessage) => void }>();
  return {
    publish(subject, data, headers) {
      // Most runs have no subscriber: nothing to build then.
      if (subscriptions.size === 0) return;
      const message: TransportMessage = { subject, data, headers: headers ?? NO_HEADERS };
      for (const subscription of subscriptions) {
        if (!subjectMatches(subscription.pattern, subject)) continue;
        queueMicrotask(() => {
          if (subscriptions.has(subscription)) subscription.handler(message);
        });
      }
    },
    subscribe(pattern, handler) {
      const subscription = { pattern, handler };
      subscriptions.add(subscription);
      return { unsubscribe: () => void subscriptions.delete(subscription) };
    },
    clear() {
      subscriptions.clear();
    },
  };
}
