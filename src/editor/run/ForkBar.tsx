/**
 * Forks and lineage of a run on view: "Fork here" at the scrubber's iteration, and for a run that
 * is a fork, its parent (a link) and a table of how it differs from it, iteration by iteration.
 */
import { useEffect, useState } from 'react';
import type { AgentEvent } from '../../events/eventTypes.js';
import type { RunDiff } from '../../server/apiTypes.js';
import type { ApiClient } from '../api/apiClient.js';

/**
 * The ForkBar's props.
 *
 * @example
 * ```tsx
 * <ForkBar api={api} traceId={traceId} events={events} iteration={2} onOpen={openRun} onError={(what, error) => console.error(what, error)} />
 * ```
 */
export interface ForkBarProps {
  readonly api: ApiClient;
  readonly traceId: string;
  /** The run's events (its `run.forked`, second, names its parent). */
  readonly events: readonly AgentEvent[];
  /** The iteration of the scrubber's current event (0 before the first model call). */
  readonly iteration: number;
  /** Opens a run, as the runs list does. */
  readonly onOpen: (traceId: string) => void;
  /** Told when a fork or diff request fails. */
  readonly onError: (what: string, error: unknown) => void;
}

/**
 * The parent and fork point of a run that is a fork, read off its second event.
 *
 * @example
 * ```ts
 * lineageOf(events); // { parent: 'mx0bgfww-acbfeb6e5da3', atIteration: 2 }, or undefined for a run that is no fork
 * ```
 */
export function lineageOf(events: readonly AgentEvent[]): { readonly parent: string; readonly atIteration: number } | undefined {
  const second = events[1];
  return second?.type === 'run.forked' ? { parent: second.data.parent.traceId, atIteration: second.data.atIteration } : undefined;
}

/**
 * The fork button, the lineage line, and the "Diff with parent" table of a run that is not under way.
 *
 * @example
 * ```tsx
 * {finished && <ForkBar api={api} traceId={traceId} events={events} iteration={view.step?.event.iteration ?? 0} onOpen={openRun} onError={report} />}
 * ```
 */
export function ForkBar({ api, traceId, events, iteration, onOpen, onError }: ForkBarProps) {
  const [forking, setForking] = useState(false);
  const [diff, setDiff] = useState<RunDiff>();
  const [showDiff, setShowDiff] = useState(false);
  const lineage = lineageOf(events);
  // A fork runs live from the start of an iteration: before the first model call, that is the first.
  const at = Math.max(1, iteration);

  useEffect(() => {
    setDiff(undefined);
    setShowDiff(false);
  }, [traceId]);

  const fork = async () => {
    setForking(true);
    try {
      onOpen((await api.forkRun(traceId, { at })).traceId);
    } catch (error) {
      onError('Could not fork the run', error);
    } finally {
      setForking(false);
    }
  };

  const toggleDiff = async () => {
    if (showDiff || lineage === undefined) return setShowDiff(false);
    try {
      setDiff(await api.diffRuns(lineage.parent, traceId));
      setShowDiff(true);
    } catch (error) {
      onError('Could not compare the run with its parent', error);
    }
  };

  return (
    <div className="fork-bar" data-testid="fork-bar">
      <div className="fork-bar__row">
        <button type="button" className="btn btn--small" onClick={() => void fork()} disabled={forking} data-testid="fork-here" title="Start a new run that replays this one up to this iteration, then goes on live">
          Fork here (#{at})
        </button>
        {lineage && (
          <>
            <span className="fork-bar__lineage" data-testid="fork-lineage">
              forked from{' '}
              <button type="button" className="link" onClick={() => onOpen(lineage.parent)} data-testid="fork-parent">
                {lineage.parent}
              </button>{' '}
              at #{lineage.atIteration}
            </span>
            <button type="button" className="btn btn--small" onClick={() => void toggleDiff()} aria-pressed={showDiff} data-testid="diff-with-parent">
              Diff with parent
            </button>
          </>
        )}
      </div>
      {showDiff && diff && <DiffTable diff={diff} />}
    </div>
  );
}

/** One row per iteration: each run's decision and tool there, the fields that differ, the first difference marked. */
function DiffTable({ diff }: { readonly diff: RunDiff }) {
  const firstIteration = diff.first?.iteration ?? null;
  return (
    <table className="diff-table" data-testid="diff-table">
      <thead>
        <tr>
          <th>#</th>
          <th>parent</th>
          <th>this run</th>
          <th>differs in</th>
        </tr>
      </thead>
      <tbody>
        {diff.iterations.map((row) => {
          const first = row.iteration === firstIteration;
          return (
            <tr key={row.iteration} className={first ? 'diff-table__first' : undefined} data-testid="diff-row" data-iteration={row.iteration} data-first={first ? 'true' : undefined}>
              <td>{first ? `▶ ${row.iteration}` : row.iteration}</td>
              <td>{sideText(row.a)}</td>
              <td>{sideText(row.b)}</td>
              <td>{row.differences.length === 0 ? 'same' : row.differences.join(', ')}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function sideText(side: RunDiff['iterations'][number]['a']): string {
  if (side === null) return '—';
  return side.tool === null ? side.decision : `${side.decision} ${side.tool}`;
}
