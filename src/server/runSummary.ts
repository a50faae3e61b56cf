import { fold } from '../events/evolve.js';
import { AgentEventType, isTerminal, type AgentEvent } from '../events/eventTypes.js';
import { pendingWait } from '../events/pendingWait.js';
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
 * `running` while it is under way here, `waiting` when its log ends in a wait for an answer from
 * outside (with what it waits for), else `interrupted` (its log stops early: `redflow resume`
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
  const waiting = ended || facts.active ? undefined : pendingWait(events);
  return {
    traceId: first.traceId,
    status: ended ? 'finished' : facts.active ? 'running' : waiting ? 'waiting' : 'interrupted',
    ...(facts.flow !== undefined && { flow: facts.flow }),
    startedAt: first.data.startedAt,
    iterations: envelope.state.iteration,
    lastSeq: last.seq,
    ...(outcome !== undefined && { outcome }),
    ...(waiting !== undefined && { waiting }),
    envelope,
  };
}

/** A {@link RunResponse} without its envelope: what a list shows. */
export function runSummary(response: RunResponse): RunSummary {
  const { envelope: _envelope, ...summary } = response;
  return summary;
}
