import type { FlowNode } from '../contracts/schema-types.js';
import { ErrorCode } from '../errors.js';
import { flowDiagnostic, Severity, type FlowDiagnostic } from './diagnostics.js';
import { NodeType } from './nodeTypes.js';

// The verifier model a flow's agent core names by node id (`verification.model`, docs/verification.md):
// a model.llm node left unconnected, since the core connects to its own model only.

/**
 * The node id an agent core's raw config names as its verifier, when it names one (inline model
 * settings name none).
 *
 * @example
 * ```ts
 * verifierNodeId({ verification: { model: 'judge' } }) // 'judge'
 * ```
 */
export function verifierNodeId(config: unknown): string | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const verification = (config as { verification?: unknown }).verification;
  if (typeof verification !== 'object' || verification === null) return undefined;
  const model = (verification as { model?: unknown }).model;
  return typeof model === 'string' && model !== '' ? model : undefined;
}

/**
 * The verifier node an agent core names, or the `VERIFIER_MODEL_NOT_FOUND` error when no
 * model.llm node of the flow has that id.
 *
 * @example
 * ```ts
 * const found = findVerifierNode('judge', (id) => nodesById.get(id), { nodeId: 'agent', path: 'nodes[1]' });
 * if ('error' in found) errors.push(found.error);
 * ```
 */
export function findVerifierNode(
  id: string,
  nodeOf: (id: string) => FlowNode | undefined,
  core: { readonly nodeId: string; readonly path: string },
  modelIds: readonly string[],
): { readonly node: FlowNode } | { readonly error: FlowDiagnostic } {
  const node = nodeOf(id);
  if (node?.type === NodeType.ModelLlm) return { node };
  const what = node === undefined ? 'there is no node with that id' : `'${id}' is a ${node.type} node, not a ${NodeType.ModelLlm}`;
  const models = modelIds.map((model) => `'${model}'`).join(', ');
  return {
    error: flowDiagnostic(Severity.Error, ErrorCode.VERIFIER_MODEL_NOT_FOUND, `${NodeType.AgentCore} '${core.nodeId}' verifies with the model '${id}', but ${what}`, {
      hint: `add a ${NodeType.ModelLlm} node with the id '${id}' (it needs no edge), set verification.model to ${models === '' ? 'the id of a model.llm node' : `one of ${models}`}, or give the model's settings inline`,
      path: `${core.path}.config.verification.model`,
      nodeId: core.nodeId,
    }),
  };
}
