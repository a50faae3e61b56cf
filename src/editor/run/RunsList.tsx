/**
 * The runs the server knows (GET /api/runs), newest first: the open flow's, or all of them on the
 * toggle; a click opens one from its log.
 */
import type { RunSummary } from '../../server/apiTypes.js';

/** The runs list's props. */
export interface RunsListProps {
  /** The runs, in the order the server gave them (newest first). */
  readonly runs: readonly RunSummary[];
  /** The run being viewed, highlighted in the list. */
  readonly currentTraceId: string | undefined;
  /** Every run is listed, not only the open flow's. */
  readonly showAll: boolean;
  /** Called with the toggle's new value. */
  readonly onShowAllChange: (showAll: boolean) => void;
  /** Called with the trace id of the run clicked. */
  readonly onOpen: (traceId: string) => void;
  /** Asks the server for the list again. */
  readonly onRefresh: () => void;
  /**
   * A run the editor asked for that the server refused to start: it has no log, so the server
   * never lists it; it is listed here, with its error, until the next run or another flow.
   */
  readonly failedStart?: FailedStart | undefined;
}

/** A run refused at its start: the flow it was for and why, as the server said it. */
export interface FailedStart {
  readonly flowId: string;
  readonly problem: string;
}

function outcomeLabel(run: RunSummary): string {
  if (run.status !== 'finished') return run.status;
  return run.outcome ? run.outcome.status : 'finished';
}

/** The runs, one button per run with its outcome (and a blocked run's error code), flow, iterations, start time and trace id. */
export function RunsList({ runs, currentTraceId, showAll, onShowAllChange, onOpen, onRefresh, failedStart }: RunsListProps) {
  return (
    <section className="runs" data-testid="runs-list" data-show-all={showAll}>
      <header className="panel-title">
        Runs
        <label className="runs__toggle" title="list the runs of every flow, not only the open one">
          <input type="checkbox" checked={showAll} onChange={(event) => onShowAllChange(event.target.checked)} data-testid="runs-all" />
          all flows
        </label>
        <button type="button" className="btn btn--small btn--ghost" onClick={onRefresh} data-testid="runs-refresh" title="refresh">
          ↻
        </button>
      </header>
      {runs.length === 0 && failedStart === undefined && <p className="empty">{showAll ? 'No runs yet.' : 'No runs of this flow yet.'}</p>}
      <ul className="runs__list">
        {failedStart && (
          <li>
            <div className="run-row run-row--not-started" data-testid="run-row-not-started" data-flow={failedStart.flowId} role="alert">
              <span className="chip chip--outcome-blocked">not started</span>
              <span className="run-row__flow">{failedStart.flowId}</span>
              <span className="run-row__problem">{failedStart.problem}</span>
            </div>
          </li>
        )}
        {runs.map((run) => {
          const blockedBy = run.outcome?.status === 'blocked' ? run.outcome.error?.code : undefined;
          return (
            <li key={run.traceId}>
              <button
                type="button"
                className={run.traceId === currentTraceId ? 'run-row is-current' : 'run-row'}
                onClick={() => onOpen(run.traceId)}
                data-testid="run-row"
                data-trace-id={run.traceId}
                data-flow={run.flow}
                title={run.outcome?.error ? `${run.outcome.error.code}: ${run.outcome.error.message}` : run.outcome?.answer}
              >
                <span className={`chip chip--outcome-${outcomeLabel(run)}`}>{outcomeLabel(run)}</span>
                <span className="run-row__flow">{run.flow ?? 'flow'}</span>
                {blockedBy && (
                  <code className="run-row__code" data-testid="run-row-code">
                    {blockedBy}
                  </code>
                )}
                <span className="run-row__meta">
                  {run.iterations} it · {new Date(run.startedAt).toLocaleTimeString()}
                </span>
                <code className="run-row__trace">{run.traceId}</code>
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
