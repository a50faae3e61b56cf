import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { flowFileInsideRoots, flowFileRoots } from '../../files/fileRoots.js';
import { loadValidFlow } from '../../flows/loadValidFlow.js';
import { NodeType } from '../../flows/nodeTypes.js';
import { planRun } from '../../runtime/runPlan.js';
import { subagentPrefix } from './clusterSubagents.js';

/** A flow a worker hosts, and the subject prefix it hosts it on. */
export interface HostedFlow {
  readonly flowPath: string;
  readonly prefix: string;
  /** The folders besides the flow's own where its files may be. */
  readonly allowFiles: readonly string[];
  /** The subagent it is, `undefined` for the flow the worker was given. */
  readonly subagent?: string;
}

/**
 * The flows a worker of `flowPath` hosts on a cluster: that flow on `prefix`, and each of its
 * subagents' flows (`agent.ref`), and theirs, down the tree, each on its own prefix
 * (`subagentPrefix`: a prefix's core workers run one flow). A subagent's files are judged against
 * the folders of the flow that names it, as in an embedded run.
 *
 * @throws FlowInvalidError for a flow of the tree that does not validate; RedflowError
 *   `NODE_CONFIG_INVALID` when two subagents of one flow would share a prefix (their names differ
 *   only in case or in `_` against `-`).
 * @example
 * ```ts
 * for (const hosted of await flowsToHost('flows/parent.json', 'redflow')) await startCoreWorker({ nc, ...hosted });
 * ```
 */
export async function flowsToHost(flowPath: string, prefix: string, allowFiles: readonly string[] = []): Promise<HostedFlow[]> {
  const hosted: HostedFlow[] = [];
  const visit = async (flow: HostedFlow): Promise<void> => {
    hosted.push(flow);
    const { flow: resolved, baseDir, flowPath: file } = await loadValidFlow(flow.flowPath, undefined, flow.allowFiles);
    const roots = flowFileRoots(file, flow.allowFiles);
    const taken = new Map<string, string>();
    for (const tool of planRun(resolved, baseDir).tools) {
      if (tool.type !== NodeType.AgentRef) continue;
      const childPrefix = subagentPrefix(flow.prefix, tool.name);
      const other = taken.get(childPrefix);
      if (other !== undefined) {
        throw new RedflowError(
          errorInfo(ErrorCode.NODE_CONFIG_INVALID, `subagents "${other}" and "${tool.name}" would share the subject prefix ${childPrefix} on a cluster`, {
            hint: 'rename one: names that differ only in case, or in "_" against "-", make the same prefix',
          }),
        );
      }
      taken.set(childPrefix, tool.name);
      const childPath = await flowFileInsideRoots(tool.config.flow, 'subagent flow', roots);
      await visit({ flowPath: childPath, prefix: childPrefix, allowFiles: roots.roots, subagent: tool.name });
    }
  };
  await visit({ flowPath, prefix, allowFiles });
  return hosted;
}
