import { PermissionViolationError, type NatsConnection, type Status } from '@nats-io/transport-node';

/** The subscriptions the server refused while {@link watchRefusedSubscriptions} watched. */
export interface RefusedSubscriptions {
  /** Waits until the server has answered everything sent so far, then lists what it refused. */
  settle(): Promise<readonly string[]>;
  /** Stops watching. */
  stop(): void;
}

/**
 * Watches the connection for subscriptions the server refuses (a user without the subscribe
 * permission). The server says so on the connection, not to the subscription's owner alone, and
 * only once it has read the SUB: start this before subscribing, then `settle()` after. A service
 * that started without checking would say "ready" and never hear a request.
 *
 * @param matches which refused subjects count (default: all).
 * @example
 * ```ts
 * const watch = watchRefusedSubscriptions(nc);
 * nc.subscribe('redflow.model.model', { queue: 'redflow.model.model' });
 * const refused = await watch.settle(); // ['redflow.model.model'] for a user that may not
 * watch.stop();
 * ```
 */
export function watchRefusedSubscriptions(nc: NatsConnection, matches: (subject: string) => boolean = () => true): RefusedSubscriptions {
  const refused: string[] = [];
  const statuses = nc.status() as AsyncIterable<Status> & { stop(): void };
  void (async () => {
    for await (const status of statuses) {
      const error = status.type === 'error' ? status.error : undefined;
      if (error instanceof PermissionViolationError && error.operation === 'subscription' && matches(error.subject)) refused.push(error.subject);
    }
  })();
  return {
    async settle() {
      await nc.flush();
      // The status iterator hands the server's error over on a later turn than the flush's answer.
      await new Promise((resolve) => setImmediate(resolve));
      return [...refused];
    },
    stop: () => statuses.stop(),
  };
}
