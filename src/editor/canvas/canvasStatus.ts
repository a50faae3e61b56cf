/**
 * What the canvas shows on top of the flow: which nodes a run is at (live or scrubbed) and which
 * nodes the last validation found problems in. Custom nodes read it from this context, so a
 * highlight never changes the nodes themselves.
 */
import { createContext, useContext } from 'react';
import type { ActiveNodes, FailedTools, NodeActivity } from '../run/runView.js';

/** The worst problem validation found in a node. */
export type NodeProblem = 'error' | 'warning';

/** The overlay the canvas draws on the nodes, keyed by node id. */
export interface CanvasStatus {
  /** What the viewed run is doing at each node (a node not listed is idle). */
  readonly activity: ActiveNodes;
  /** The worst problem the last validation found in each node (a node not listed has none). */
  readonly problems: ReadonlyMap<string, NodeProblem>;
  /** The error code of each tool node whose last call (up to the viewed position) failed. */
  readonly failedTools?: FailedTools;
}

/** Provides the {@link CanvasStatus}; the default (nothing active, no problems) leaves nodes plain outside a provider. */
export const CanvasStatusContext = createContext<CanvasStatus>({ activity: {}, problems: new Map() });

/** The run activity, validation problem and failed call's code of one node. */
export function useNodeStatus(nodeId: string): { activity: NodeActivity | undefined; problem: NodeProblem | undefined; failedCode: string | undefined } {
  const status = useContext(CanvasStatusContext);
  return { activity: status.activity[nodeId], problem: status.problems.get(nodeId), failedCode: status.failedTools?.[nodeId] };
}
