import type { AgentEvent } from '../../events/eventTypes.js';
import { logStatus } from '../../events/resumePoint.js';
import type { RunResponse, RunStatus } from '../../server/apiTypes.js';

/** What the cluster says of a run besides its log. */
export interface ClusterRunFacts {
  /**
   * True while the run has a record in the `<prefix>-runs` bucket that is not parked: a core worker
   * owns it (or is about to).
   */
  readonly underWay: boolean;
  /** The run's flow as a flows-directory id, when known. */
  readonly flow?: string;
}

/**
 * A cluster run as the API shows it, from its stored log: `finished` once the log ends with
 * `run.completed`/`run.failed`; otherwise `running` while the runs bucket holds its record (a core
 * worker owns it, or will take it over within a lease), `waiting` when its log ends in a wait for
 * an answer from outside and no worker holds it (its record is parked), and `interrupted` when
 * nothing will continue it (`redflow resume <traceId> --nats` does).
 *
 * @throws RedflowError LOG_EMPTY when the log does not begin with `run.started`.
 *
 * @example
 * ```ts
 * const response = clusterRunResponse(events, { underWay: true, flow: 'order-status' });
 * ```
 */
export function clusterRunResponse(events: readonly AgentEvent[], facts: ClusterRunFacts): RunResponse {
  const status = logStatus(events);
  const envelope = status.kind === 'finished' ? status.envelope : status.point.envelope;
  const last = events[events.length - 1] as AgentEvent;
  // A parked run's log ends in its wait, and no worker holds it.
  const waiting = status.kind === 'resumable' && !facts.underWay ? status.point.wait : undefined;
  const runStatus: RunStatus = status.kind === 'finished' ? 'finished' : facts.underWay ? 'running' : waiting ? 'waiting' : 'interrupted';
  return {
    traceId: last.traceId,
    status: runStatus,
    ...(facts.flow !== undefined && { flow: facts.flow }),
    startedAt: status.started.startedAt,
    iterations: envelope.state.iteration,
    lastSeq: last.seq,
    ...(status.kind === 'finished' && { outcome: status.outcome }),
    ...(waiting !== undefined && { waiting }),
    envelope,
  };
}
