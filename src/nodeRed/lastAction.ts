import { AgentEventType, type AgentEvent } from '../events/eventTypes.js';

/**
 * What a run did last, as the agent's editor panel shows it: the answer it ended with, or else
 * the last tool it called, with the input the model gave it.
 */
export type LastAction =
  | { readonly kind: 'answer'; readonly status: string; readonly answer: string }
  | { readonly kind: 'tool'; readonly tool: string; readonly input: Readonly<Record<string, unknown>> };

/**
 * The run's last action, from its log: undefined before its first tool call or answer.
 *
 * @example
 * ```ts
 * const { events } = await readJsonlLog(file);
 * lastAction(events); // { kind: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' } }
 * ```
 */
export function lastAction(events: readonly AgentEvent[]): LastAction | undefined {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const event = events[i] as AgentEvent;
    if (event.type === AgentEventType.RunCompleted || event.type === AgentEventType.RunFailed) {
      const { outcome } = event.data;
      // An ending without an answer (a model error, a timeout) leaves the last tool call as the last action.
      if (outcome.answer !== undefined) return { kind: 'answer', status: outcome.status, answer: outcome.answer };
    }
    if (event.type === AgentEventType.ToolRequested) return { kind: 'tool', tool: event.data.tool, input: event.data.input };
  }
  return undefined;
}
