import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { isMappedType } from './nodeRedTypes.js';

/** One node of Node-RED's flows JSON (`flows.json`, the Admin API's `/flows`, an export): a tab, a node, a config node. */
export interface NodeRedFlowNode {
  readonly id: string;
  readonly type: string;
  /** The tab (or subflow) the node is on; config nodes and tabs have none. */
  readonly z?: string;
  readonly wires?: readonly (readonly string[])[];
  readonly [property: string]: unknown;
}

/** A tab of Node-RED's flows, as `{ type: 'tab' }` holds it. */
export interface NodeRedTab extends NodeRedFlowNode {
  readonly type: 'tab';
  readonly label?: string;
  readonly info?: string;
  readonly env?: readonly { readonly name: string; readonly type?: string; readonly value?: unknown }[];
}

/** Node-RED's type of a tab. */
export const TAB_TYPE = 'tab';

/**
 * Checks that `value` is Node-RED flows JSON: an array of objects, each with a string `id` and
 * `type` (ids unique), `wires` (when there) an array of arrays of ids.
 *
 * @throws RedflowError `NODE_RED_FLOWS_INVALID` saying which node is wrong.
 */
export function parseNodeRedFlows(value: unknown, what = 'the Node-RED flows'): NodeRedFlowNode[] {
  const invalid = (why: string) =>
    new RedflowError(errorInfo(ErrorCode.NODE_RED_FLOWS_INVALID, `${what} are not Node-RED flows JSON: ${why}`, { hint: 'give the JSON array Node-RED exports (Menu → Export → JSON) or its flows.json' }));
  if (!Array.isArray(value)) throw invalid('not a JSON array of nodes');
  const seen = new Set<string>();
  value.forEach((node: unknown, index) => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) throw invalid(`item ${index} is not an object`);
    const { id, type, wires } = node as { id?: unknown; type?: unknown; wires?: unknown };
    if (typeof id !== 'string' || id === '') throw invalid(`item ${index} has no string "id"`);
    if (typeof type !== 'string' || type === '') throw invalid(`node ${id} has no string "type"`);
    if (seen.has(id)) throw invalid(`two nodes have the id ${id}`);
    seen.add(id);
    if (wires !== undefined && !(Array.isArray(wires) && wires.every((port) => Array.isArray(port) && port.every((target) => typeof target === 'string')))) {
      throw invalid(`node ${id} has "wires" that are not arrays of node ids`);
    }
  });
  return value as NodeRedFlowNode[];
}

/** A tab that holds Redflow nodes, for messages and listings. */
export interface RedflowTab {
  readonly id: string;
  /** The tab's label, when the flows hold the tab itself (an export of some nodes may not). */
  readonly label?: string;
}

/**
 * The tabs (by `z`) that hold at least one Redflow node, in the order they first appear: a tab
 * node need not be among the flows (an export of a tab's nodes only).
 */
export function redflowTabs(flows: readonly NodeRedFlowNode[]): RedflowTab[] {
  const labels = new Map(flows.filter((node) => node.type === TAB_TYPE).map((tab) => [tab.id, (tab as NodeRedTab).label]));
  const found = new Map<string, RedflowTab>();
  for (const node of flows) {
    if (node.z === undefined || !isMappedType(node.type) || found.has(node.z)) continue;
    const label = labels.get(node.z);
    found.set(node.z, { id: node.z, ...(typeof label === 'string' && { label }) });
  }
  return [...found.values()];
}

/**
 * The tab to convert: the one named by id or label, else the only tab holding Redflow nodes.
 *
 * @throws RedflowError `NODE_RED_TAB_NOT_FOUND` when the name matches no tab, or when none or
 *   several hold Redflow nodes and none is named (the message lists them).
 */
export function pickTab(flows: readonly NodeRedFlowNode[], name?: string): RedflowTab {
  const tabs = redflowTabs(flows);
  const describe = (tab: RedflowTab) => (tab.label === undefined ? tab.id : `${tab.id} ("${tab.label}")`);
  if (name !== undefined) {
    const byId = flows.find((node) => node.type === TAB_TYPE && node.id === name) ?? tabs.find((tab) => tab.id === name);
    const byLabel = flows.filter((node) => node.type === TAB_TYPE && (node as NodeRedTab).label === name);
    if (byId !== undefined) return { id: byId.id, ...(typeof byId.label === 'string' && { label: byId.label }) };
    if (byLabel.length === 1 && byLabel[0] !== undefined) return { id: byLabel[0].id, label: name };
    throw new RedflowError(
      errorInfo(
        ErrorCode.NODE_RED_TAB_NOT_FOUND,
        byLabel.length > 1 ? `${byLabel.length} tabs are labelled "${name}"` : `no tab has the id or label "${name}"`,
        { hint: tabs.length === 0 ? 'the flows hold no Redflow nodes' : `name one of the tabs with Redflow nodes by its id: ${tabs.map(describe).join(', ')}` },
      ),
    );
  }
  if (tabs.length === 1 && tabs[0] !== undefined) return tabs[0];
  throw new RedflowError(
    errorInfo(ErrorCode.NODE_RED_TAB_NOT_FOUND, tabs.length === 0 ? 'no tab of the flows holds a Redflow node' : `${tabs.length} tabs hold Redflow nodes: ${tabs.map(describe).join(', ')}`, {
      hint: tabs.length === 0 ? 'add an agent (redflow-agent) and its model to a tab' : 'name the one to convert with --tab <id or label>',
    }),
  );
}
