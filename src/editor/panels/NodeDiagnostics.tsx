/** The last validation's errors and warnings about one node, listed under its form. */
import type { FlowDiagnostic } from '../../flows/diagnostics.js';

/** Lists `diagnostics` (already filtered to one node); renders nothing when there are none. */
export function NodeDiagnostics({ diagnostics }: { diagnostics: readonly FlowDiagnostic[] }) {
  if (diagnostics.length === 0) return null;
  return (
    <ul className="diagnostics diagnostics--node" data-testid="node-diagnostics">
      {diagnostics.map((d, index) => (
        <li key={`${d.code}-${index}`} className={`diagnostic diagnostic--${d.severity}`}>
          <code>{d.code}</code> {d.message}
          {d.hint && <div className="diagnostic__hint">{d.hint}</div>}
        </li>
      ))}
    </ul>
  );
}
