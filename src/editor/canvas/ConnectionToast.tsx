/** The reason an attempted connection was refused, shown over the canvas until dismissed or replaced. */
import { useEffect } from 'react';

/** Why a connection was refused, for {@link ConnectionToast}. */
export interface RefusedConnection {
  /** The edge rule's error code. */
  readonly code: string;
  /** What was refused, in the editor's terms (which handles fit). */
  readonly message: string;
  /** The edge rule's own message, when `message` is the editor's wording of it. */
  readonly detail?: string;
  /** Changes with each refusal, so the same message shown twice restarts its timer. */
  readonly at: number;
}

/** Shows `refusal` until dismissed, replaced, or 8 s pass (calling `onDismiss`); renders nothing without one. */
export function ConnectionToast({ refusal, onDismiss }: { refusal: RefusedConnection | undefined; onDismiss: () => void }) {
  useEffect(() => {
    if (!refusal) return;
    const timer = window.setTimeout(onDismiss, 8000);
    return () => window.clearTimeout(timer);
  }, [refusal, onDismiss]);
  if (!refusal) return null;
  return (
    <div className="toast toast--error" role="alert" data-testid="connection-error">
      <div className="toast__title">
        Connection refused <code data-testid="connection-error-code">{refusal.code}</code>
      </div>
      <div className="toast__message" data-testid="connection-error-message">
        {refusal.message}
      </div>
      {refusal.detail !== undefined && (
        <div className="toast__detail" data-testid="connection-error-detail">
          {refusal.detail}
        </div>
      )}
      <button type="button" className="toast__close" onClick={onDismiss} aria-label="dismiss">
        ×
      </button>
    </div>
  );
}
