/**
 * The strict edge rules: which node may connect to which, and with what kind of edge.
 *
 * Pure TypeScript, shared with the browser editor (its `isValidConnection` calls
 * {@link checkConnection}): it imports only other pure modules.
 */
import { ErrorCode } from '../errors.js';
import { EdgeKind, NODE_TYPES, NodeRole, EDGE_KINDS, isEdgeKind, roleOf } from './nodeTypes.js';

/** One allowed connection: a node of role `source` may connect to a node of role `target`. */
export interface ConnectionRule {
  readonly source: NodeRole;
  readonly target: NodeRole;
  readonly kind: EdgeKind;
}

/**
 * Every allowed connection. Anything not listed is rejected.
 * Memory is the only capability that may be wired in both directions.
 */
export const CONNECTION_RULES: readonly ConnectionRule[] = Object.freeze([
  { source: NodeRole.Input, target: NodeRole.Core, kind: EdgeKind.Data },
  { source: NodeRole.Core, target: NodeRole.Model, kind: EdgeKind.Model },
  { source: NodeRole.Core, target: NodeRole.Tool, kind: EdgeKind.Tool },
  { source: NodeRole.Core, target: NodeRole.Memory, kind: EdgeKind.Memory },
  { source: NodeRole.Memory, target: NodeRole.Core, kind: EdgeKind.Memory },
  { source: NodeRole.Core, target: NodeRole.Output, kind: EdgeKind.Data },
]);

/** The result of {@link checkConnection}: the edge's kind, or why the connection is refused. */
export type ConnectionCheck =
  | { readonly ok: true; readonly kind: EdgeKind }
  | {
      readonly ok: false;
      readonly code:
        | typeof ErrorCode.EDGE_NOT_ALLOWED
        | typeof ErrorCode.EDGE_KIND_MISMATCH
        | typeof ErrorCode.UNKNOWN_NODE_TYPE;
      readonly message: string;
    };

/** How each role may be connected, said the way a user reads it. */
const HOW_ROLE_CONNECTS: { readonly [R in NodeRole]: string } = {
  [NodeRole.Input]: 'inputs connect only to an agent.core (input → agent.core)',
  [NodeRole.Core]:
    'an agent.core connects to a model, tools, a memory and outputs, and receives inputs; a flow has exactly one agent.core',
  [NodeRole.Model]: 'models connect only to an agent.core (agent.core → model)',
  [NodeRole.Tool]: 'tools connect only to an agent.core (agent.core → tool)',
  [NodeRole.Memory]: 'memories connect only to an agent.core (agent.core ↔ memory)',
  [NodeRole.Output]: 'outputs are connected only from an agent.core (agent.core → output)',
};

function ruleFor(source: NodeRole, target: NodeRole): ConnectionRule | undefined {
  return CONNECTION_RULES.find((rule) => rule.source === source && rule.target === target);
}

/**
 * The kind of an edge from a node of type `sourceType` to one of type `targetType`, or
 * `undefined` when that connection is not allowed (or a type is unknown).
 *
 * @example
 * ```ts
 * inferEdgeKind('agent.core', 'tool.http') // 'tool'
 * inferEdgeKind('tool.http', 'agent.core') // undefined
 * ```
 */
export function inferEdgeKind(sourceType: string, targetType: string): EdgeKind | undefined {
  const source = roleOf(sourceType);
  const target = roleOf(targetType);
  if (source === undefined || target === undefined) return undefined;
  return ruleFor(source, target)?.kind;
}

/**
 * Decides whether a node of type `sourceType` may connect to one of type `targetType`. When `kind`
 * is given (not `undefined`/`null`), it must equal the kind the two types imply. The refusal's
 * message says what is wrong and which connection is right, so the editor can show it as is.
 *
 * @example
 * ```ts
 * checkConnection('agent.core', 'model.llm') // { ok: true, kind: 'model' }
 * checkConnection('tool.http', 'tool.http')
 * // { ok: false, code: 'EDGE_NOT_ALLOWED',
 * //   message: 'tool.http cannot connect to tool.http: tools connect only to an agent.core (agent.core → tool)' }
 * ```
 */
export function checkConnection(sourceType: string, targetType: string, kind?: string | null): ConnectionCheck {
  const source = roleOf(sourceType);
  const target = roleOf(targetType);
  if (source === undefined) return unknownType(sourceType);
  if (target === undefined) return unknownType(targetType);

  const rule = ruleFor(source, target);
  if (rule === undefined) {
    return {
      ok: false,
      code: ErrorCode.EDGE_NOT_ALLOWED,
      message: `${sourceType} cannot connect to ${targetType}: ${whyNot(source, target, sourceType, targetType)}`,
    };
  }
  if (kind !== undefined && kind !== null) {
    if (!isEdgeKind(kind)) {
      return {
        ok: false,
        code: ErrorCode.EDGE_KIND_MISMATCH,
        message: `${describeType(kind)} is not an edge kind (kinds: ${EDGE_KINDS.join(', ')}); ${sourceType} → ${targetType} is a '${rule.kind}' edge`,
      };
    }
    if (kind !== rule.kind) {
      return {
        ok: false,
        code: ErrorCode.EDGE_KIND_MISMATCH,
        message: `${sourceType} → ${targetType} is a '${rule.kind}' edge, not a '${kind}' edge: set its kind to '${rule.kind}' or leave the kind out`,
      };
    }
  }
  return { ok: true, kind: rule.kind };
}

function unknownType(type: unknown): ConnectionCheck {
  return {
    ok: false,
    code: ErrorCode.UNKNOWN_NODE_TYPE,
    message: `${describeType(type)} is not a node type Redflow knows (known types: ${NODE_TYPES.join(', ')})`,
  };
}

function whyNot(source: NodeRole, target: NodeRole, sourceType: string, targetType: string): string {
  if (ruleFor(target, source) !== undefined) {
    return `the edge goes the other way (${targetType} → ${sourceType})`;
  }
  // Explain the rule of the node that is not the agent core: that is the one wired wrongly.
  return HOW_ROLE_CONNECTS[source === NodeRole.Core ? target : source];
}

function describeType(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : typeof value;
}
