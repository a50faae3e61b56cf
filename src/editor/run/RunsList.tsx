/** The runs the server knows (GET /api/runs), newest first; a click opens one from its log. */
import type { RunSummary } from '../../server/apiTypes.js';

/** The runs list's props. */
export interface RunsListProps {
  /** The runs, in the order the server gave them (newest first). */
  readonly runs: readonly RunSummary[];
  /** The run being viewed, highlighted in the list. */
  readonly currentTraceId: string | undefined;
  /** Called with the trace id of the run clicked. */
  readonly onOpen: (traceId: string) => void;
  /** Asks the server for the list again. */
  readonly onRefresh: () => void;
}

function outcomeLabel(run: RunSummary): string {
  if (run.status !== 'finished') return run.status;
  return run.outcome ? run.outcome.status : 'finished';
}

/** The runs, one button per run with its outcome, flow, iterations, start time and trace id. */
export function RunsList({ runs, currentTraceId, onOpen, onRefresh }: RunsListProps) {
  return (
    <section className="runs" data-testid="runs-list">
      <header className="panel-title">
        Runs
        <button type="button" className="btn btn--small btn--ghost" onClick={onRefresh} data-testid="runs-refresh" title="refresh">
          ↻
        </button>
      </header>
      {runs.length === 0 && <p className="empty">No runs yet.</p>}
      <ul className="runs__list">
        {runs.map((run) => (
          <li key={run.traceId}>
            <button
              type="button"
              className={run.traceId === currentTraceId ? 'run-row is-current' : 'run-row'}
              onClick={() => onOpen(run.traceId)}
              data-testid="run-row"
              data-trace-id={run.traceId}
              title={run.outcome?.error ? `${run.outcome.error.code}: ${run.outcome.error.message}` : run.outcome?.answer}
            >
              <span className={`chip chip--outcome-${outcomeLabel(run)}`}>{outcomeLabel(run)}</span>
              <span className="run-row__flow">{run.flow ?? 'flow'}</span>
              <span className="run-row__meta">
                {run.iterations} it · {new Date(run.startedAt).toLocaleTimeString()}
              </span>
              <code className="run-row__trace">{run.traceId}</code>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
