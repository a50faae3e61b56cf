import { createHash } from 'node:crypto';
import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import type { FlowDiagnostic } from '../flows/diagnostics.js';
import { serveAgentActors, type AgentActors } from './agentActors.js';
import { checkAgentWiring, deployedConfigs, describeDiagnostic, type AgentWiring } from './agentWiring.js';
import type { NodeRedApi, NodeRedNode } from './nodeRedApi.js';
import { problemStatus } from './runStatus.js';

/** A diagnostic with node ids replaced by names, as the status and the Errors tab show it. */
export interface DescribedDiagnostic {
  readonly code: string;
  readonly message: string;
  readonly hint?: string;
  readonly nodeId?: string;
}

/**
 * One configuration of an agent: its wiring as deployed, checked, and the actors built from it.
 * A deploy that changes only a capability node (Node-RED's "modified nodes") leaves the agent
 * running: it then builds a new generation for its new runs, and retires the old one once the
 * runs that use it have ended.
 */
export interface Generation {
  /** What the wiring and the credentials it uses were; another value means another generation. */
  readonly fingerprint: string;
  readonly errors: DescribedDiagnostic[];
  readonly warnings: readonly DescribedDiagnostic[];
  /** Rejects when the wiring is wrong or an actor cannot be built (reported already). */
  readonly actors: Promise<AgentActors>;
  /** Runs under way on these actors. */
  users: number;
  retired: boolean;
}

/** Where an agent builds its actors. */
export interface GenerationPlace {
  /** Relative paths in node configs start here: Node-RED's user directory. */
  readonly baseDir: string;
  readonly allowFiles?: readonly string[];
}

/**
 * The agent's wiring as the deployed flows have it now, checked, and its fingerprint: the Redflow
 * document (without positions) and a digest of the credentials of its nodes.
 */
export function currentWiring(RED: NodeRedApi, agentId: string): { wiring?: AgentWiring; failure?: DescribedDiagnostic; fingerprint: string } {
  try {
    const wiring = checkAgentWiring(agentId, deployedConfigs((callback) => RED.nodes.eachNode(callback)));
    const digest = createHash('sha256');
    for (const node of wiring.graph.flow.nodes) {
      digest.update(JSON.stringify([node.id, node.type, node.config, RED.nodes.getCredentials(node.id) ?? null]));
    }
    digest.update(JSON.stringify(wiring.graph.flow.edges));
    return { wiring, fingerprint: digest.digest('hex') };
  } catch (error) {
    const info = toErrorInfo(error, ErrorCode.FLOW_SCHEMA_MISMATCH);
    return { failure: { code: info.code, message: info.message }, fingerprint: `failed:${info.message}` };
  }
}

/**
 * Starts a generation from a checked wiring: a red status with the first error's code and reason
 * (each error and warning logged, with its hint) when the wiring is wrong, else the actors built
 * and served (a build failure, such as `MODEL_KEY_MISSING`, reported the same way).
 */
export function startGeneration(
  RED: NodeRedApi,
  node: NodeRedNode,
  place: GenerationPlace,
  current: ReturnType<typeof currentWiring>,
): Generation {
  const { wiring, failure, fingerprint } = current;
  const labels = wiring?.graph.labels ?? new Map<string, string>();
  const described = (diagnostic: FlowDiagnostic): DescribedDiagnostic => ({
    code: diagnostic.code,
    message: describeDiagnostic(diagnostic, labels),
    ...(diagnostic.hint !== undefined && { hint: diagnostic.hint }),
    ...(diagnostic.nodeId !== undefined && { nodeId: diagnostic.nodeId }),
  });
  const errors: DescribedDiagnostic[] = failure ? [failure] : [];
  const validation = wiring?.validation;
  if (validation !== undefined && !validation.ok) errors.push(...validation.errors.map(described));
  const warnings = validation?.warnings.map(described) ?? [];
  for (const warning of warnings) node.warn(withHint(warning));

  let actors: Promise<AgentActors>;
  if (validation === undefined || !validation.ok || wiring === undefined) {
    const first = errors[0];
    node.status(problemStatus(first === undefined ? 'the agent cannot run' : `${first.code}: ${first.message}`));
    for (const error of errors) node.error(withHint(error));
    actors = Promise.reject(new RedflowError(errorInfo((first?.code ?? ErrorCode.FLOW_SCHEMA_MISMATCH) as ErrorCode, first?.message ?? 'the wiring is wrong')));
  } else {
    node.status({});
    actors = serveAgentActors({
      flow: validation.flow,
      baseDir: place.baseDir,
      ...(place.allowFiles !== undefined && { allowFiles: place.allowFiles }),
      credentials: (id) => RED.nodes.getCredentials(id),
      getNode: (id) => RED.nodes.getNode(id),
      newId: () => RED.util.generateId(),
    });
    actors.catch((error: unknown) => {
      const info = toErrorInfo(error, ErrorCode.TOOL_CONFIG_INVALID);
      const problem = { code: info.code, message: info.message, ...(info.hint !== undefined && { hint: info.hint }) };
      errors.push(problem);
      node.status(problemStatus(`${info.code}: ${info.message}`));
      node.error(withHint(problem));
    });
  }
  // Nobody may be waiting on it yet: a rejection is reported above, not left unhandled.
  actors.catch(() => undefined);
  return { fingerprint, errors, warnings, actors, users: 0, retired: false };
}

/** Stops serving a generation's actors once no run uses them. */
export async function releaseGeneration(generation: Generation): Promise<void> {
  if (!generation.retired || generation.users > 0) return;
  const actors = await generation.actors.catch(() => undefined);
  await actors?.close();
}

/** `CODE: message (hint)`: how the agent's errors and warnings read in the log and the debug sidebar. */
export function withHint(diagnostic: { readonly code: string; readonly message: string; readonly hint?: string }): string {
  const text = `${diagnostic.code}: ${diagnostic.message}`;
  return diagnostic.hint === undefined ? text : `${text} (${diagnostic.hint})`;
}
