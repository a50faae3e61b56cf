import type { AgentEvent } from '../../events/eventTypes.js';

/** How many runs a live subscriber remembers the last event of (the oldest is forgotten first). */
const RUNS_REMEMBERED = 10_000;

/**
 * Drops the events a live subscriber of the trace subjects has seen already. The JetStream store
 * publishes each event there once, after its append is acknowledged (an append retried after a
 * lost acknowledgement is stored once and published live once), but a core subscriber gets
 * whatever anyone allowed publishes there. A run's events come in order, so an event whose seq is
 * not past the last one shown for its run is a repeat.
 *
 * @example
 * ```ts
 * const fresh = liveDuplicateFilter();
 * nc.subscribe('redflow.trace.>', { callback: (_, msg) => fresh(parseTraceEvents(msg.data) ?? []).forEach(print) });
 * ```
 */
export function liveDuplicateFilter(runsRemembered = RUNS_REMEMBERED): (events: readonly AgentEvent[]) => AgentEvent[] {
  const lastSeqs = new Map<string, number>();
  return (events) => {
    const fresh: AgentEvent[] = [];
    for (const event of events) {
      const last = lastSeqs.get(event.traceId);
      if (last !== undefined && event.seq <= last) continue;
      fresh.push(event);
      // Re-inserted: the map's order is the order runs were last heard of.
      lastSeqs.delete(event.traceId);
      lastSeqs.set(event.traceId, event.seq);
      if (lastSeqs.size > runsRemembered) lastSeqs.delete(lastSeqs.keys().next().value as string);
    }
    return fresh;
  };
}
