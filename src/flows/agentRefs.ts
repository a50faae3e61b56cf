import path from 'node:path';
import { ErrorCode, RedflowError } from '../errors.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from './diagnostics.js';
import { checkFlowFiles, validateFlowFiles } from './flowFiles.js';
import { resolveFlowFile, type FlowFileRoots } from '../files/fileRoots.js';
import { loadFlowFile } from './loadFlow.js';
import { nodeRedOnlyDiagnostics } from './nodeRedOnly.js';
import { NodeType } from './nodeTypes.js';
import type { FlowValidation } from './validateFlow.js';

import { MAX_SUBAGENT_DEPTH } from '../machines/subagents.js';

export { MAX_SUBAGENT_DEPTH } from '../machines/subagents.js';

/** An `agent.ref` of a flow: where it is, and the flow file it names as written. */
interface AgentRefNode {
  readonly nodeId: string;
  readonly index: number;
  readonly reference: string;
}

/** What is wrong below an `agent.ref`, said from the flow that names it. */
interface RefProblem {
  readonly code: typeof ErrorCode.AGENT_REF_NOT_FOUND | typeof ErrorCode.AGENT_REF_INVALID | typeof ErrorCode.AGENT_REF_CYCLE | typeof ErrorCode.AGENT_REF_TOO_DEEP;
  readonly message: string;
  readonly hint: string;
}

/**
 * Checks the subagents of a flow, and theirs, down the whole tree: each `agent.ref` must name a
 * flow file that exists (`AGENT_REF_NOT_FOUND`) and is a valid flow whose own files are allowed
 * (`AGENT_REF_INVALID`, with its first error), no chain of them may lead back to a flow already on
 * it (`AGENT_REF_CYCLE`: A → B → A would never end), and none may be more than
 * {@link MAX_SUBAGENT_DEPTH} levels below the flow (`AGENT_REF_TOO_DEEP`). Every subagent's files
 * are judged against the same folders as the flow's (`roots`), each from its own folder. One error
 * per `agent.ref` of the flow, on that node; a reference outside the roots is left to
 * `checkFlowFiles`, which reports it. Messages name files as the flows write them, never by their
 * absolute path (they may be sent to a remote client). Never throws on bad content.
 *
 * @param flowPath the flow's own file, when it has one: a chain back to it is a cycle.
 * @example
 * ```ts
 * const errors = await checkAgentRefs(flow, 'flows/parent.json', flowFileRoots('flows/parent.json'));
 * ```
 */
export async function checkAgentRefs(flow: unknown, flowPath: string | undefined, roots: FlowFileRoots): Promise<FlowDiagnostic[]> {
  const refs = agentRefsOf(flow);
  if (refs.length === 0) return [];
  const self = flowPath === undefined ? undefined : await realFlowPath(flowPath, roots);
  const diagnostics: FlowDiagnostic[] = [];
  for (const ref of refs) {
    const problem = await walk(ref.reference, roots.baseDir, roots.roots, self === undefined ? [] : [self], [], 1);
    if (problem === undefined) continue;
    diagnostics.push(
      flowDiagnostic(Severity.Error, problem.code, `agent.ref '${ref.nodeId}': ${problem.message}`, {
        hint: problem.hint,
        path: `nodes[${ref.index}].config.flow`,
        nodeId: ref.nodeId,
      }),
    );
  }
  return diagnostics;
}

/**
 * The subagent `reference` (written in a flow of folder `baseDir`) and everything below it: the
 * first problem found, depth first. `chain` holds the real paths of the flows above it, `trail`
 * the references that led here, as written.
 */
async function walk(
  reference: string,
  baseDir: string,
  roots: readonly string[],
  chain: readonly string[],
  trail: readonly string[],
  depth: number,
): Promise<RefProblem | undefined> {
  const resolved = await resolveFlowFile(reference, { baseDir, roots });
  const here = [...trail, reference];
  const shown = here.join(' → ');
  // The flow's own references outside the roots are reported by checkFlowFiles; deeper ones here.
  if (!resolved.ok) {
    return trail.length === 0
      ? undefined
      : { code: ErrorCode.AGENT_REF_INVALID, message: `${shown} is refused: ${resolved.why}`, hint: 'keep subagent flows, and their files, inside the folders allowed for flow files' };
  }
  if (chain.includes(resolved.file)) {
    return {
      code: ErrorCode.AGENT_REF_CYCLE,
      message: `${shown} leads back to a flow already on the way: its runs would call each other without end`,
      hint: 'remove one agent.ref of the cycle, or give that subagent a flow of its own',
    };
  }
  if (depth > MAX_SUBAGENT_DEPTH) {
    return {
      code: ErrorCode.AGENT_REF_TOO_DEEP,
      message: `${shown} nests subagents ${depth} levels deep; at most ${MAX_SUBAGENT_DEPTH} are allowed`,
      hint: 'flatten the tree: connect deep subagents to a flow higher up',
    };
  }
  let loaded;
  try {
    loaded = await loadFlowFile(resolved.file, { shownAs: reference });
  } catch (error) {
    if (error instanceof RedflowError && error.code === ErrorCode.FLOW_NOT_FOUND) {
      return { code: ErrorCode.AGENT_REF_NOT_FOUND, message: `the subagent flow ${shown} does not exist`, hint: 'check the path: it is relative to the flow file that names it' };
    }
    const why = error instanceof RedflowError ? `${error.code}: ${error.message}` : 'it cannot be read';
    return { code: ErrorCode.AGENT_REF_INVALID, message: `the subagent flow ${shown} cannot be read (${why})`, hint: 'run redflow validate on it' };
  }
  const own = loaded.validation.ok
    ? [...nodeRedOnlyDiagnostics(loaded.validation.flow.definition), ...(await checkFlowFiles(loaded.validation.flow.definition, { baseDir: loaded.baseDir, roots }))]
    : loaded.validation.errors;
  const [first] = own;
  if (first !== undefined) {
    return {
      code: ErrorCode.AGENT_REF_INVALID,
      message: `the subagent flow ${shown} is not a valid flow (${own.length} error${own.length === 1 ? '' : 's'}; first ${first.code}: ${first.message})`,
      hint: 'run redflow validate on it for the details',
    };
  }
  // Only a valid flow gets here, so its definition is there.
  const definition = loaded.validation.ok ? loaded.validation.flow.definition : undefined;
  for (const child of agentRefsOf(definition)) {
    const problem = await walk(child.reference, loaded.baseDir, roots, [...chain, resolved.file], here, depth + 1);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The `agent.ref` nodes of a flow with a string `flow`, read without trusting its shape. */
function agentRefsOf(flow: unknown): AgentRefNode[] {
  const nodes = typeof flow === 'object' && flow !== null ? (flow as { nodes?: unknown }).nodes : undefined;
  if (!Array.isArray(nodes)) return [];
  const refs: AgentRefNode[] = [];
  nodes.forEach((node: unknown, index) => {
    if (typeof node !== 'object' || node === null) return;
    const { id, type, config } = node as { id?: unknown; type?: unknown; config?: unknown };
    if (type !== NodeType.AgentRef || typeof config !== 'object' || config === null) return;
    const reference = (config as { flow?: unknown }).flow;
    if (typeof reference === 'string') refs.push({ nodeId: typeof id === 'string' ? id : `#${index}`, index, reference });
  });
  return refs;
}

/** The real path of the flow's own file, as its references are compared with it. */
async function realFlowPath(flowPath: string, roots: FlowFileRoots): Promise<string | undefined> {
  const absolute = path.resolve(flowPath);
  const resolved = await resolveFlowFile(path.basename(absolute), { baseDir: path.dirname(absolute), roots: [path.dirname(absolute), ...roots.roots] });
  return resolved.ok ? resolved.file : undefined;
}

/**
 * A flow's validation with its files and its subagents checked too: {@link validateFlowFiles},
 * {@link checkFlowFilesLoad} (the files a run opens at its start exist and load), then
 * {@link checkAgentRefs} on a flow that passed them. What `redflow validate` and the API's
 * validate and save report.
 *
 * @example
 * ```ts
 * const result = await validateFlowTree(validateFlow(body), body, flowFileRoots(file, allowFiles), file);
 * ```
 */
export async function validateFlowTree(validation: FlowValidation, flow: unknown, roots: FlowFileRoots, flowPath?: string): Promise<FlowValidation> {
  const withFiles = await validateFlowFiles(validation, flow, roots);
  // Missing or broken files are reported beside the flow's other errors: a flow fresh from the
  // palette names a tool module that is not written yet, and that is what its author must see.
  // Loaded when a flow is validated, not with the package's root import (which stays small).
  const { checkFlowFilesLoad } = await import('./flowFileLoads.js');
  const loads = await checkFlowFilesLoad(flow, roots);
  const checked: FlowValidation =
    loads.length === 0 ? withFiles : { ok: false, errors: [...(withFiles.ok ? [] : withFiles.errors), ...loads], warnings: withFiles.warnings };
  if (!checked.ok) return checked;
  const refs = await checkAgentRefs(flow, flowPath, roots);
  return refs.length === 0 ? checked : { ok: false, errors: refs, warnings: checked.warnings };
}
