/**
 * Errors: the three the tab always lists (invalid JSON, tool not allowed, iteration overflow), each
 * marked seen or not in this run, then every error the run recorded — the outcome's and each failed
 * tool call's — with its code, message and hint.
 */
import { WATCHED_ERRORS, type RunError } from '../run/runView.js';

/**
 * The Errors tab. `errors` are the run's errors up to the viewed position; `hasRun` tells "no run
 * yet" from "no errors in this run".
 */
export function ErrorsTab({ errors, hasRun }: { errors: readonly RunError[]; hasRun: boolean }) {
  const seen = new Set(errors.map((error) => error.code));
  return (
    <div className="tab-body" data-testid="tab-errors">
      <ul className="watched">
        {WATCHED_ERRORS.map((family) => (
          <li key={family.code} className={seen.has(family.code) ? 'watched__item is-seen' : 'watched__item'} data-testid={`watched-${family.code}`}>
            <span className="watched__mark">{seen.has(family.code) ? '✖' : '✓'}</span>
            {family.title} <code>{family.code}</code>
          </li>
        ))}
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
