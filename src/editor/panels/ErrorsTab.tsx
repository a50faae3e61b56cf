/**
 * Errors: the three the tab always lists (invalid JSON, tool not allowed, iteration overflow), each
 * marked seen or not in this run (neither before a run has been seen), then every error the run
 * recorded — the outcome's and each failed tool call's — with its code, message and hint.
 */
import { WATCHED_ERRORS, type RunError } from '../run/runView.js';

/** How a watched error is marked: unknown before a run (a green check would claim a clean run), then seen or clear. */
function watchedMark(hasRun: boolean, seen: boolean): { symbol: string; className: string; title: string } {
  if (!hasRun) return { symbol: '–', className: 'is-unknown', title: 'no run yet' };
  return seen ? { symbol: '✖', className: 'is-seen', title: 'seen in this run' } : { symbol: '✓', className: 'is-clear', title: 'not seen in this run' };
}

/**
 * The Errors tab. `errors` are the run's errors up to the viewed position; `hasRun` tells "no run
 * yet" from "no errors in this run".
 */
export function ErrorsTab({ errors, hasRun }: { errors: readonly RunError[]; hasRun: boolean }) {
  const seen = new Set(errors.map((error) => error.code));
  return (
    <div className="tab-body" data-testid="tab-errors">
      <ul className="watched">
        {WATCHED_ERRORS.map((family) => {
          const mark = watchedMark(hasRun, seen.has(family.code));
          return (
            <li key={family.code} className={`watched__item ${mark.className}`} data-testid={`watched-${family.code}`} title={mark.title}>
              <span className="watched__mark">{mark.symbol}</span>
              {family.title} <code>{family.code}</code>
            </li>
          );
        })}
      </ul>
      {!hasRun && <p className="empty">No run yet.</p>}
      {hasRun && errors.length === 0 && <p className="empty">No errors in this run.</p>}
      <ol className="error-list">
        {errors.map((error) => (
          <li key={`${error.seq}-${error.code}`} className={`error-card error-card--${error.source}`} data-testid="run-error" data-code={error.code}>
            <div className="error-card__head">
              <code className="error-card__code">{error.code}</code>
              <span className="muted">
                iteration {error.iteration} · {error.source === 'tool' ? `tool ${error.tool ?? ''} (the run went on)` : 'ended the run'}
              </span>
            </div>
            <div className="error-card__message">{error.message}</div>
            {error.hint && <div className="error-card__hint">hint: {error.hint}</div>}
          </li>
        ))}
      </ol>
    </div>
  );
}
