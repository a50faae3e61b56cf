import { useMemo } from 'react';
import type { FlowDiagnostic } from '../../flows/diagnostics.js';
import { isCoreType, isModelType, isToolType } from '../../flows/nodeTypes.js';
import { toolNameOf } from '../flow/connectedTools.js';
import { flowTypeOf, type AgentCoreNode, type RedflowNode } from '../flow/editorNodes.js';
import { QuestionPrompt } from '../run/QuestionPrompt.js';
import { AgentCorePanel, type AgentCorePanelProps } from './AgentCorePanel.js';
import { NodeConfigPanel } from './NodeConfigPanel.js';
import { NodeLastStep, type NodeLastStepProps } from './NodeLastStep.js';
import { RuntimeTab } from './RuntimeTab.js';

/** The side panel's props: the agent core panel's, and what decides which panel is shown. */
export interface SidePanelProps extends Omit<AgentCorePanelProps, 'node' | 'diagnostics'> {
  /** The one node selected, or the core when none is; undefined when several are. */
  readonly panelNode: RedflowNode | undefined;
  readonly selectedCount: number;
  /** True when the run on view has steps to show. */
  readonly hasSteps: boolean;
  /** True when the run on view has no graph (its flow is gone, or it is an agent file's): its steps only. */
  readonly graphless: boolean;
  /** The last validation's diagnostics about a node. */
  readonly diagnosticsOf: (nodeId: string) => FlowDiagnostic[];
}

/**
 * The editor's right-hand panel: a question the run asks, then the selected node's panel (the
 * agent core's tabs, or a node's config and its last call in the run on view).
 *
 * @example
 * ```tsx
 * <SidePanel panelNode={coreNode} selectedCount={0} hasSteps={false} graphless={false} diagnosticsOf={() => []} {...corePanelProps} />
 * ```
 */
export function SidePanel({ panelNode, selectedCount, hasSteps, graphless, diagnosticsOf, ...core }: SidePanelProps) {
  const { view, runState, traceId } = core;
  // A model or tool node clicked while a run is on view shows its last call in that run.
  const runNode = useMemo((): NodeLastStepProps['node'] | undefined => {
    if (!panelNode || !hasSteps) return undefined;
    const type = flowTypeOf(panelNode);
    if (isModelType(type)) return { kind: 'model' };
    return isToolType(type) ? { kind: 'tool', toolName: toolNameOf(panelNode) ?? panelNode.id } : undefined;
  }, [panelNode, hasSteps]);
  return (
    <div className="side-panel" data-testid="side-panel">
      <QuestionPrompt />
      {panelNode && isCoreType(panelNode.type) ? (
        <AgentCorePanel node={panelNode as AgentCoreNode} diagnostics={diagnosticsOf(panelNode.id)} {...core} />
      ) : graphless ? (
        <RuntimeTab view={view} runState={runState} traceId={traceId} />
      ) : panelNode ? (
        <>
          {runNode && <NodeLastStep node={runNode} details={view.details} />}
          <NodeConfigPanel node={panelNode} diagnostics={diagnosticsOf(panelNode.id)} />
        </>
      ) : (
        <p className="empty">{selectedCount > 1 ? `${selectedCount} nodes selected.` : 'Add an agent.core to configure the agent, or select a node.'}</p>
      )}
    </div>
  );
}
