import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { FlowDiagnostic } from './diagnostics.js';
import { loadFlowFile } from './loadFlow.js';
import { checkFlowFiles } from './flowFiles.js';
import { flowFileRoots } from '../files/fileRoots.js';
import { checkAgentRefs } from './agentRefs.js';
import { nodeRedOnlyDiagnostics } from './nodeRedOnly.js';

/**
 * Loads a flow file that must be valid to be run or hosted (an embedded run, a worker, a cluster
 * run, the API): its resolved flow, the folder its relative paths start from, its warnings and its
 * absolute path. Every file the flow names (tool modules, answers files, memory stores) must be
 * inside the flow file's folder or one of `allowFiles`, symbolic links followed: checked here,
 * before anything is imported or read (`FLOW_FILE_OUTSIDE_ROOTS`). A flow with a `tool.flow` runs
 * only in Node-RED (`FLOW_TOOL_NODE_RED_ONLY`). Its subagents (`agent.ref`) are checked down the
 * tree (`checkAgentRefs`: `AGENT_REF_NOT_FOUND`, `AGENT_REF_INVALID`, `AGENT_REF_CYCLE`, `AGENT_REF_TOO_DEEP`).
 *
 * @throws FlowInvalidError with every diagnostic when the flow does not validate (`name` says
 *   which flow in the message; default its path).
 *
 * @example
 * ```ts
 * const { flow, baseDir } = await loadValidFlow('examples/order-status/flow.json');
 * ```
 */
export async function loadValidFlow(file: string, name?: string, allowFiles: readonly string[] = []) {
  // Named by `name` when given (a flow id): the API's answers must not show the server's paths.
  const loaded = await loadFlowFile(file, name === undefined ? {} : { shownAs: name });
  if (!loaded.validation.ok) {
    throw new FlowInvalidError(name ?? loaded.path, loaded.validation.errors, loaded.validation.warnings);
  }
  const definition = loaded.validation.flow.definition;
  const roots = flowFileRoots(loaded.path, allowFiles);
  const outside = [...nodeRedOnlyDiagnostics(definition), ...(await checkFlowFiles(definition, roots))];
  if (outside.length > 0) throw new FlowInvalidError(name ?? loaded.path, outside, loaded.validation.warnings);
  // Its subagents, down the tree: each a valid flow, no cycle, not too deep.
  const subagents = await checkAgentRefs(definition, loaded.path, roots);
  if (subagents.length > 0) throw new FlowInvalidError(name ?? loaded.path, subagents, loaded.validation.warnings);
  return { flow: loaded.validation.flow, baseDir: loaded.baseDir, warnings: loaded.validation.warnings, flowPath: loaded.path };
}

/** A flow that does not validate: the diagnostics say why. */
export class FlowInvalidError extends RedflowError {
  constructor(
    readonly flowPath: string,
    readonly errors: readonly FlowDiagnostic[],
    readonly warnings: readonly FlowDiagnostic[],
  ) {
    const first = errors[0];
    super(
      errorInfo(first?.code ?? ErrorCode.FLOW_SCHEMA_MISMATCH, `${flowPath} is not a valid flow (${errors.length} error${errors.length === 1 ? '' : 's'})`, {
        hint: 'run `redflow validate` on it for the details',
      }),
    );
  }
}
