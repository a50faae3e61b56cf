/** The toolbar: flows (list, open, new, save, validate, rename, delete), run (input, run, abort) and the inspector. */
import { useState } from 'react';
import type { FlowSummary } from '../../server/apiTypes.js';

/** The toolbar's props: the app owns the state; the toolbar keeps only the run input being typed. */
export interface ToolbarProps {
  /** The saved flows, for the "open a flow" menu. */
  readonly flows: readonly FlowSummary[];
  /** The id the flow is saved and run under; editable, so it may not be in `flows` yet. */
  readonly flowId: string;
  readonly flowName: string;
  /** A request is in flight: Save, Validate and Run are disabled. */
  readonly busy: boolean;
  /** A run is starting or streaming: Run is disabled and Abort enabled. */
  readonly running: boolean;
  /** The flow has changes not saved yet: marked by its name, and Save stands out. */
  readonly dirty: boolean;
  /** The viewed run has events to replay in the inspector. */
  readonly canInspect: boolean;
  readonly onFlowIdChange: (id: string) => void;
  readonly onFlowNameChange: (name: string) => void;
  /** Called with a flow chosen in the menu. */
  readonly onOpen: (id: string) => void;
  /** Runs an `.agent.md` agent of the flows folder (listed beside the flows), by its id. */
  readonly onRunAgent: (id: string) => void;
  /** The menu is about to open: the app lists the flows again, so flows added on disk since show up. */
  readonly onPickerOpen: () => void;
  readonly onNew: () => void;
  readonly onSave: () => void;
  readonly onValidate: () => void;
  /** The open flow is saved under `flowId`, so it can be renamed and deleted. */
  readonly saved: boolean;
  readonly onRename: () => void;
  readonly onDelete: () => void;
  /** Called with the raw input text; the caller parses it (text or JSON). */
  readonly onRun: (input: string) => void;
  readonly onAbort: () => void;
  readonly onInspect: () => void;
}

/** The picker's value of an `.agent.md` agent: picking it runs the agent (it has no graph to open). */
const AGENT_OPTION = 'agent:';

/** The editor's header bar: open, create, save and validate a flow (or run an agent file), start or abort a run, open the inspector. */
export function Toolbar(props: ToolbarProps) {
  const [input, setInput] = useState('');
  const known = props.flows.some((flow) => flow.id === props.flowId && flow.kind !== 'agent');
  const agents = props.flows.filter((flow) => flow.kind === 'agent');
  return (
    <header className="toolbar" data-testid="toolbar">
      <div className="brand">
        <span className="brand__mark">◆</span> redflow
      </div>
      <div className="toolbar__group">
        <select
          className="toolbar__select"
          value={known ? props.flowId : ''}
          onChange={(event) => {
            const { value } = event.target;
            if (value.startsWith(AGENT_OPTION)) props.onRunAgent(value.slice(AGENT_OPTION.length));
            else if (value !== '') props.onOpen(value);
          }}
          onFocus={props.onPickerOpen}
          onMouseDown={props.onPickerOpen}
          data-testid="flow-select"
          aria-label="open a flow"
        >
          <option value="">{props.flows.length === 0 ? 'no saved flows' : 'open a flow…'}</option>
          {props.flows
            .filter((flow) => flow.kind !== 'agent')
            .map((flow) => (
              <option key={flow.id} value={flow.id}>
                {flow.id}
                {flow.valid ? '' : ' (invalid)'}
              </option>
            ))}
          {agents.length > 0 && (
            <optgroup label="agent files: run" data-testid="agent-files">
              {agents.map((agent) => (
                <option key={agent.id} value={`${AGENT_OPTION}${agent.id}`} disabled={!agent.valid}>
                  ▶ {agent.id}
                  {agent.valid ? '' : ' (invalid)'}
                </option>
              ))}
            </optgroup>
          )}
        </select>
        <button type="button" className="btn" onClick={props.onNew} data-testid="new-flow">
          New
        </button>
        {/* Labelled on screen: two bare boxes side by side do not say which is the file and which the title. */}
        <label className="toolbar__field" title="the flow's path in the flows folder, without .json: it is saved and run under it">
          <span className="toolbar__label">id</span>
          <input className="toolbar__input toolbar__input--id" value={props.flowId} onChange={(event) => props.onFlowIdChange(event.target.value)} placeholder="flow id" aria-label="flow id" data-testid="flow-id" />
        </label>
        <label className="toolbar__field" title="the flow's name, shown in lists">
          <span className="toolbar__label">name</span>
          <input className="toolbar__input toolbar__input--name" value={props.flowName} onChange={(event) => props.onFlowNameChange(event.target.value)} placeholder="name" aria-label="flow name" data-testid="flow-name" />
        </label>
        {props.dirty && (
          <span className="toolbar__dirty" title="unsaved changes" aria-label="unsaved changes" data-testid="dirty-marker">
            •
          </span>
        )}
        <button
          type="button"
          className={props.dirty ? 'btn btn--dirty' : 'btn'}
          onClick={props.onSave}
          disabled={props.busy || props.flowId.trim() === ''}
          data-testid="save-flow"
          data-dirty={props.dirty}
          title={props.dirty ? 'save the unsaved changes' : 'saved'}
        >
          Save
        </button>
        <button type="button" className="btn" onClick={props.onValidate} disabled={props.busy} data-testid="validate-flow">
          Validate
        </button>
        <button type="button" className="btn btn--ghost" onClick={props.onRename} disabled={props.busy || !props.saved} data-testid="rename-flow" aria-label="Rename" title="save under a new id and delete the old file">
          <span className="toolbar__long">Rename</span>
          <span className="toolbar__short" aria-hidden="true">✎</span>
        </button>
        <button type="button" className="btn btn--ghost" onClick={props.onDelete} disabled={props.busy || !props.saved} data-testid="delete-flow" aria-label="Delete" title="delete the flow's file (its runs stay)">
          <span className="toolbar__long">Delete</span>
          <span className="toolbar__short" aria-hidden="true">✕</span>
        </button>
      </div>
      <form
        className="toolbar__group toolbar__group--run"
        onSubmit={(event) => {
          event.preventDefault();
          props.onRun(input);
        }}
      >
        <input className="toolbar__input toolbar__input--wide" value={input} onChange={(event) => setInput(event.target.value)} placeholder="input (text or JSON)" aria-label="run input" data-testid="run-input" />
        <button type="submit" className="btn btn--primary" disabled={props.busy || props.running || props.flowId.trim() === ''} data-testid="run-flow">
          ▶ Run
        </button>
        <button type="button" className="btn btn--danger" onClick={props.onAbort} disabled={!props.running} data-testid="abort-run">
          ■ Abort
        </button>
      </form>
      <div className="toolbar__group">
        <button type="button" className="btn btn--ghost" onClick={props.onInspect} disabled={!props.canInspect} data-testid="open-inspector" title="replay the current run in the Stately inspector: a hosted page (stately.ai) in a popup, so it needs internet access; without it, the Statechart view here shows the same run">
          <span className="toolbar__long">Open in Stately inspector</span>
          <span className="toolbar__short">Inspector</span>
        </button>
      </div>
    </header>
  );
}
