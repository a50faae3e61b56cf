/** The agent core's panel and its four tabs: General, Tools, Runtime / Debug, Errors. */
import { useReactFlow } from '@xyflow/react';
import { useMemo } from 'react';
import type { FlowDiagnostic } from '../../flows/diagnostics.js';
import { NodeType } from '../../flows/nodeTypes.js';
import { validateNodeConfig } from '../flow/configSchemas.js';
import { connectedTools } from '../flow/connectedTools.js';
import type { AgentCoreNode, RedflowEdge, RedflowNode } from '../flow/editorNodes.js';
import type { RunView } from '../run/runView.js';
import { AGENT_TAB_TITLES, AgentTab } from './agentTabs.js';
import { ErrorsTab } from './ErrorsTab.js';
import { GeneralTab } from './GeneralTab.js';
import { NodeDiagnostics } from './NodeDiagnostics.js';
import { RuntimeTab } from './RuntimeTab.js';
import { ToolsTab } from './ToolsTab.js';

/** The agent core panel's props. */
export interface AgentCorePanelProps {
  readonly node: AgentCoreNode;
  /** The whole graph, to find the tools connected to the core. */
  readonly nodes: readonly RedflowNode[];
  readonly edges: readonly RedflowEdge[];
  /** The last validation's diagnostics about the core. */
  readonly diagnostics: readonly FlowDiagnostic[];
  /** The open tab: controlled, so the app can switch to Runtime when a run starts. */
  readonly tab: AgentTab;
  readonly onTabChange: (tab: AgentTab) => void;
  /** The run as of the scrubber's position, for the Runtime and Errors tabs. */
  readonly view: RunView;
  /** The run panel's state (`RunViewState`). */
  readonly runState: string;
  readonly traceId: string | undefined;
  /** Selects a node on the canvas (a tool, from the Tools tab). */
  readonly onSelectNode: (nodeId: string) => void;
}

/**
 * The agent core's side panel: its validity and the General, Tools, Runtime / Debug and Errors tabs.
 * Config edits go straight to the node with `updateNodeData` (so it must be inside the canvas's `ReactFlowProvider`).
 */
export function AgentCorePanel({ node, nodes, edges, diagnostics, tab, onTabChange, view, runState, traceId, onSelectNode }: AgentCorePanelProps) {
  const { updateNodeData } = useReactFlow<RedflowNode, RedflowEdge>();
  const config = node.data.config as Record<string, unknown>;
  const tools = useMemo(() => connectedTools(node.id, nodes, edges), [node.id, nodes, edges]);
  const issues = useMemo(() => validateNodeConfig(NodeType.AgentCore, config, tools.map((t) => t.name)), [config, tools]);
  const setConfig = (next: Record<string, unknown>) => updateNodeData(node.id, { config: next });
  const errorCount = view.errors.length;
  return (
    <div className="config-panel" data-testid="agent-panel" data-node-id={node.id}>
      <header className="config-panel__head">
        <div>
          <div className="config-panel__type">agent.core</div>
          <h2 className="config-panel__id">{node.id}</h2>
        </div>
        <span className={`chip ${issues.length === 0 ? 'chip--ok' : 'chip--error'}`} data-testid="config-status">
          {issues.length === 0 ? 'valid' : `${issues.length} problem${issues.length === 1 ? '' : 's'}`}
        </span>
      </header>
      <div className="tabs" role="tablist">
        {Object.values(AgentTab).map((id) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={tab === id}
            className={tab === id ? 'tab is-active' : 'tab'}
            onClick={() => onTabChange(id)}
            data-testid={`tab-button-${id}`}
          >
            {AGENT_TAB_TITLES[id]}
            {id === AgentTab.Tools && <span className="tab__count">{tools.length}</span>}
            {id === AgentTab.Errors && errorCount > 0 && <span className="tab__count tab__count--error">{errorCount}</span>}
          </button>
        ))}
      </div>
      {tab === AgentTab.General && <GeneralTab config={config} issues={issues} onChange={setConfig} />}
      {tab === AgentTab.Tools && (
        <ToolsTab
          tools={tools}
          allowedTools={Array.isArray(config.allowedTools) ? (config.allowedTools as string[]) : undefined}
          issues={issues}
          diagnostics={diagnostics}
          onAllowedToolsChange={(next) => {
            const copy = { ...config };
            if (next === undefined) delete copy.allowedTools;
            else copy.allowedTools = next;
            setConfig(copy);
          }}
          onSelectNode={onSelectNode}
        />
      )}
      {tab === AgentTab.Runtime && <RuntimeTab view={view} runState={runState} traceId={traceId} />}
      {tab === AgentTab.Errors && <ErrorsTab errors={view.errors} hasRun={view.step !== undefined} />}
      {(tab === AgentTab.General || tab === AgentTab.Tools) && <NodeDiagnostics diagnostics={diagnostics} />}
    </div>
  );
}
