import { fold } from '../events/evolve.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../events/eventTypes.js';
import type { RunResponse, RunSummary } from './apiTypes.js';

/** What the log alone cannot say about a run. */
export interface RunFacts {
  /** True while the run is under way in this process. */
  readonly active: boolean;
  /** The run's flow as a flows-directory id, when it has one. */
  readonly flow?: string;
}

/**
 * A run as the API shows it, from its events: `finished` once the last event is terminal,
 * `running` while it is under way here, else `interrupted` (its log stops early: `redflow resume`
 * continues it). `undefined` when the events do not begin with `run.started` (an empty log, or
 * one damaged from its first record: nothing to show).
 *
 * @example
 * ```ts
 * const { events } = await readJsonlLog(file);
 * const response = runResponse(events, { active: false, flow: 'order-status' });
 * ```
 */
export function runResponse(events: readonly AgentEvent[], facts: RunFacts): RunResponse | undefined {
  const first = events[0];
  const last = events[events.length - 1];
  if (first === undefined || last === undefined || first.type !== AgentEventType.RunStarted) return undefined;
  const envelope = fold(events, first.traceId);
  const ended = isTerminal(last);
  const outcome = last.type === AgentEventType.RunCompleted || last.type === AgentEventType.RunFailed ? last.data.outcome : undefined;
  return {
    traceId: first.traceId,
    status: ended ? 'finished' : facts.active ? 'running' : 'interrupted',
    ...(facts.flow !== undefined && { flow: facts.flow }),
    startedAt: first.data.startedAt,
    iterations: envelope.state.iteration,
    lastSeq: last.seq,
    ...(outcome !== undefined && { outcome }),
    envelope,
  };
}

/** A {@link RunResponse} without its envelope: what a list shows. */
export function runSummary(response: RunResponse): RunSummary {
  const { envelope: _envelope, ...summary } = response;
  return summary;
}
