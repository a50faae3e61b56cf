/** Asks for the API's bearer token when the server answers 401 (kept in sessionStorage). */
import { useState } from 'react';

/**
 * Modal asking for the bearer token. `onSubmit` gets the trimmed token and `onCancel` gives up;
 * storing the token is the caller's job (the prompt only collects it).
 */
export function TokenPrompt({ onSubmit, onCancel }: { onSubmit: (token: string) => void; onCancel: () => void }) {
  const [token, setToken] = useState('');
  return (
    <div className="modal" role="dialog" aria-modal="true" data-testid="token-prompt">
      <form
        className="modal__card"
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit(token.trim());
        }}
      >
        <h2>Token required</h2>
        <p className="muted">This server asks for a bearer token (the one <code>redflow serve --token</code> was given). It is kept for this tab only.</p>
        <input className="field__input" type="password" autoFocus value={token} onChange={(event) => setToken(event.target.value)} placeholder="token" data-testid="token-input" />
        <div className="modal__actions">
          <button type="button" className="btn" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" className="btn btn--primary" disabled={token.trim() === ''} data-testid="token-submit">
            Use token
          </button>
        </div>
      </form>
    </div>
  );
}
