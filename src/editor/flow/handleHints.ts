/**
 * The edge rules said in the editor's terms: which handle of which node kind a connection may join,
 * so a refused connection names the handles ("the model's bottom handle takes only the agent
 * core's model handle (top)") and a connection dropped on a node's body finds the one handle that
 * fits. Derived from `CONNECTION_RULES` and the handles the node components draw.
 */
import { CONNECTION_RULES } from '../../flows/edgeRules.js';
import { NodeRole } from '../../flows/nodeTypes.js';
import { SOURCE_HANDLES, TARGET_HANDLE } from './editorNodes.js';

/** One end of a connection: a node's handle. */
export interface HandleEnd {
  readonly role: NodeRole;
  readonly handleId: string;
  readonly type: 'source' | 'target';
}

const ROLE_NAMES: { readonly [R in NodeRole]: string } = {
  [NodeRole.Input]: 'input',
  [NodeRole.Core]: 'agent core',
  [NodeRole.Model]: 'model',
  [NodeRole.Tool]: 'tool',
  [NodeRole.Memory]: 'memory',
  [NodeRole.Output]: 'output',
};

/** Where each handle sits on its node, as the node components draw it (target handles are all `in`). */
const TARGET_SIDE: { readonly [R in NodeRole]: string } = {
  [NodeRole.Input]: '',
  [NodeRole.Core]: 'left',
  [NodeRole.Model]: 'bottom',
  [NodeRole.Tool]: 'top',
  [NodeRole.Memory]: 'top',
  [NodeRole.Output]: 'left',
};
const CORE_SOURCE_SIDE: Readonly<Record<string, string>> = { model: 'top', tool: 'bottom right', memory: 'bottom left', data: 'right' };

/** The user's name of a node role: `model`, `agent core`. */
export function roleName(role: NodeRole): string {
  return ROLE_NAMES[role];
}

/** `the agent core's model handle (top)`, `the tool's top handle`. */
export function describeHandle(end: HandleEnd): string {
  const name = ROLE_NAMES[end.role];
  if (end.type === 'target') return `the ${name}'s ${TARGET_SIDE[end.role] || 'incoming'} handle`;
  if (end.role === NodeRole.Core) return `the ${name}'s ${end.handleId} handle (${CORE_SOURCE_SIDE[end.handleId] ?? end.handleId})`;
  return `the ${name}'s right handle`;
}

/** The handles `end` may connect to, by the edge rules. */
export function handlesFitting(end: HandleEnd): HandleEnd[] {
  if (end.type === 'source') {
    return CONNECTION_RULES.filter((rule) => rule.source === end.role && rule.kind === end.handleId).map((rule) => ({
      role: rule.target,
      handleId: TARGET_HANDLE,
      type: 'target' as const,
    }));
  }
  if (end.handleId !== TARGET_HANDLE) return [];
  return CONNECTION_RULES.filter((rule) => rule.target === end.role).map((rule) => ({ role: rule.source, handleId: rule.kind, type: 'source' as const }));
}

/** The handles a node of `role` draws. */
export function handlesOf(role: NodeRole): HandleEnd[] {
  const targets: HandleEnd[] = role === NodeRole.Input ? [] : [{ role, handleId: TARGET_HANDLE, type: 'target' }];
  return [...targets, ...SOURCE_HANDLES[role].map((handleId) => ({ role, handleId, type: 'source' as const }))];
}

/**
 * What `end` may connect to, in words: `the model's bottom handle takes only the agent core's model
 * handle (top)`, `the agent core's tool handle (bottom right) connects only to the tool's top handle`.
 */
export function explainHandle(end: HandleEnd): string {
  const allowed = handlesFitting(end).map(describeHandle);
  const verb = end.type === 'source' ? 'connects only to' : 'takes only';
  if (allowed.length === 0) return `${describeHandle(end)} takes no connection`;
  return `${describeHandle(end)} ${verb} ${allowed.join(' or ')}`;
}

/** The handles of a node of `role` that `from` may connect to. */
export function fittingHandlesOn(role: NodeRole, from: HandleEnd): HandleEnd[] {
  return handlesOf(role).filter((candidate) =>
    handlesFitting(from).some((fit) => fit.role === candidate.role && fit.handleId === candidate.handleId && fit.type === candidate.type),
  );
}
