import type { Transport } from '../actors/transport.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { isToolUpdate, type RunLiveMessage } from '../runtime/serveActors.js';
import type { NodeStatus } from './nodeRedApi.js';
import { toolProgressStatus } from './runStatus.js';

/** What follows one run's tool progress for its agent's status: see {@link followToolProgress}. */
export interface ToolProgressFollower {
  /** Hands it each event of the run, so it knows which call is in flight (a report for another is too late to show). */
  seen(event: AgentEvent): void;
  /** Stops listening: the run has ended or parked. */
  stop(): void;
}

/**
 * Listens on a run's live subject (where a tool worker publishes what its call reports) and shows
 * each progress report of the call in flight as the agent's status (`awaitingTool · #2 crawl: 40%`).
 * The log keeps no progress, so it is heard live or not at all; a run without a live subject shows none.
 *
 * @example
 * ```ts
 * const follower = followToolProgress(transport, subjects.live?.(traceId), (status) => node.status(status), () => host.running().length);
 * onEvent: (event) => follower.seen(event);
 * ```
 */
export function followToolProgress(transport: Transport, subject: string | undefined, show: (status: NodeStatus) => void, runsUnderWay: () => number): ToolProgressFollower {
  let call: { readonly toolCallId: string; readonly tool: string; readonly iteration: number } | undefined;
  const subscription =
    subject === undefined
      ? undefined
      : transport.subscribe(subject, ({ data }) => {
          const message = data as RunLiveMessage | undefined;
          if (call === undefined || typeof message !== 'object' || message === null || !isToolUpdate(message)) return;
          if (message.progress === undefined || message.toolCallId !== call.toolCallId) return;
          show(toolProgressStatus(call.tool, call.iteration, message.progress, runsUnderWay()));
        });
  return {
    seen(event) {
      if (event.type === 'tool.requested') call = { toolCallId: event.data.idempotencyKey, tool: event.data.tool, iteration: event.iteration };
      else if (event.type !== 'tool.attached' && event.type !== 'tool.approved') call = undefined;
    },
    stop() {
      call = undefined;
      subscription?.unsubscribe();
    },
  };
}
