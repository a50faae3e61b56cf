/** Tools: the tool nodes connected to the core, which of them the model may call, and their schemas. */
import type { FlowDiagnostic } from '../../flows/diagnostics.js';
import { ErrorCode } from '../../errors.js';
import type { ConfigIssue } from '../flow/configIssue.js';
import type { ConnectedTool } from '../flow/connectedTools.js';

/** The Tools tab's props. */
export interface ToolsTabProps {
  /** The tool nodes connected to the core. */
  readonly tools: readonly ConnectedTool[];
  /** The explicit `allowedTools`, or `undefined` (every connected tool). */
  readonly allowedTools: readonly string[] | undefined;
  /** The core config's issues; the tab shows those of `allowedTools`. */
  readonly issues: readonly ConfigIssue[];
  /** The last validation's diagnostics, for its missing-input-schema warnings. */
  readonly diagnostics: readonly FlowDiagnostic[];
  /** Called with the new `allowedTools`; `undefined` removes the list (every connected tool allowed). */
  readonly onAllowedToolsChange: (next: string[] | undefined) => void;
  /** Called with a tool's node id when its type is clicked. */
  readonly onSelectNode: (nodeId: string) => void;
}

const SCHEMA_NOTE = {
  schema: 'input checked against its JSON schema',
  module: 'schema exported by the module',
  missing: 'no JSON schema: the model’s input cannot be checked',
} as const;

/**
 * The agent core's Tools tab: a checkbox per connected tool for `allowedTools` (unticking one with no
 * list yet writes the list of all the others), schema warnings, and allowed tools that are not connected.
 */
export function ToolsTab({ tools, allowedTools, issues, diagnostics, onAllowedToolsChange, onSelectNode }: ToolsTabProps) {
  const names = tools.map((tool) => tool.name);
  const isAllowed = (name: string) => allowedTools === undefined || allowedTools.includes(name);
  const toggle = (name: string, allowed: boolean) => {
    const current = allowedTools ?? names;
    onAllowedToolsChange(allowed ? [...new Set([...current, name])] : current.filter((n) => n !== name));
  };
  const notConnected = (allowedTools ?? []).filter((name) => !names.includes(name));
  const schemaWarnings = new Set(diagnostics.filter((d) => d.code === ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA).map((d) => d.nodeId));
  return (
    <div className="tab-body" data-testid="tab-tools">
      <p className="muted">
        {allowedTools === undefined ? 'No allowedTools listed: the model may call every connected tool.' : `allowedTools: ${allowedTools.length === 0 ? '(none)' : allowedTools.join(', ')}`}
        {allowedTools !== undefined && (
          <button type="button" className="link-button" onClick={() => onAllowedToolsChange(undefined)}>
            allow all connected
          </button>
        )}
      </p>
      {tools.length === 0 && <p className="empty" data-testid="no-tools">No tool is connected: drag a tool from the palette and connect the core’s “tools” handle to it.</p>}
      <ul className="tool-list">
        {tools.map((tool) => {
          const warn = tool.schema === 'missing' || schemaWarnings.has(tool.nodeId);
          return (
            <li key={tool.nodeId} className="tool-list__item" data-testid="connected-tool" data-tool={tool.name}>
              <label className="toggle">
                <input type="checkbox" checked={isAllowed(tool.name)} onChange={(event) => toggle(tool.name, event.target.checked)} data-testid={`allow-${tool.name}`} />
                <span className="tool-list__name">{tool.name}</span>
              </label>
              <button type="button" className="link-button" onClick={() => onSelectNode(tool.nodeId)}>
                {tool.type}
              </button>
              <div className={warn ? 'warning' : 'muted'} data-testid={warn ? 'tool-schema-warning' : undefined}>
                {warn ? `⚠ ${SCHEMA_NOTE.missing}` : SCHEMA_NOTE[tool.schema]}
              </div>
            </li>
          );
        })}
      </ul>
      {notConnected.length > 0 && (
        <div className="field__error" data-testid="allowed-not-connected">
          Allowed but not connected: {notConnected.join(', ')} ({ErrorCode.ALLOWED_TOOL_NOT_CONNECTED})
        </div>
      )}
      {issues
        .filter((issue) => issue.field === 'allowedTools')
        .map((issue) => (
          <div key={issue.message} className="field__error" data-testid="field-error">
            allowedTools {issue.message}
          </div>
        ))}
    </div>
  );
}
