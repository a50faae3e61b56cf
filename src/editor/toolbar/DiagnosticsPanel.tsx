/** The last validation's problems (POST /api/validate, or a save's answer); a click selects the node. */
import type { ValidationResponse } from '../../server/apiTypes.js';

/** The diagnostics panel's props. */
export interface DiagnosticsPanelProps {
  /** The validation to show; `undefined` hides the panel. */
  readonly validation: ValidationResponse | undefined;
  /** Called with the node a diagnostic is about, when its node id is clicked. */
  readonly onSelectNode: (nodeId: string) => void;
  readonly onClose: () => void;
}

/** Lists a validation's errors then warnings, with a valid/invalid header; renders nothing without a validation. */
export function DiagnosticsPanel({ validation, onSelectNode, onClose }: DiagnosticsPanelProps) {
  if (!validation) return null;
  const all = [...validation.errors, ...validation.warnings];
  return (
    <section className={`problems ${validation.ok ? 'problems--ok' : 'problems--error'}`} data-testid="diagnostics" data-ok={validation.ok ? 'true' : 'false'}>
      <header className="problems__head">
        <strong>{validation.ok ? '✓ The flow is valid' : '✖ The flow does not validate'}</strong>
        <span className="muted">
          {validation.errors.length} error{validation.errors.length === 1 ? '' : 's'}, {validation.warnings.length} warning{validation.warnings.length === 1 ? '' : 's'}
        </span>
        <button type="button" className="toast__close" onClick={onClose} aria-label="close">
          ×
        </button>
      </header>
      {all.length > 0 && (
        <ul className="diagnostics">
          {all.map((d, index) => (
            <li key={`${d.code}-${index}`} className={`diagnostic diagnostic--${d.severity}`} data-testid="diagnostic" data-code={d.code}>
              <code>{d.code}</code> {d.message}
              {d.nodeId && (
                <button type="button" className="link-button" onClick={() => onSelectNode(d.nodeId as string)}>
                  {d.nodeId}
                </button>
              )}
              {d.hint && <div className="diagnostic__hint">{d.hint}</div>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
