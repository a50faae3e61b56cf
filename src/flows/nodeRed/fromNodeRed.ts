import type { FlowDefinition, FlowEdge, FlowNode } from '../../contracts/schema-types.js';
import { AGENT_OUTPUTS, NODE_RED_TYPES, NodeRedType, isMappedType, readField } from './nodeRedTypes.js';
import { readMetadata, wireKey, type FlowMetadata, type NodeMetadata } from './flowMetadata.js';
import { TAB_TYPE, pickTab, type NodeRedFlowNode, type NodeRedTab } from './nodeRedFlows.js';

/** A tab of Node-RED's flows as a Redflow flow document. */
export interface ConvertedTab {
  readonly flow: FlowDefinition;
  /** The tab's id in Node-RED. */
  readonly tab: string;
  /** When Redflow's editor last saved it, if it did (ISO time). */
  readonly savedAt?: string;
}

/**
 * Converts one tab of Node-RED's flows JSON into a Redflow flow document: each Redflow node of the
 * tab becomes the node of its kind (same config fields, `name` its label, or its `config.name` for
 * a tool; `x`/`y` its position), each wire between two of them an edge (the agent's outputs give
 * the edge's kind: answer `data`, `model`, `tools`, `memory`). Node-RED's own nodes (an inject, a
 * debug, a flow tool's body) are not part of the document; saving it back keeps them
 * ({@link redflowToNodeRed} with `existing`). What a Redflow editor saved beyond nodes and wires
 * comes back from the tab's {@link FlowMetadata}, so a document converted to Node-RED and back is
 * the same document.
 *
 * @param options.tab the tab's id or label; default: the only tab holding Redflow nodes.
 * @throws RedflowError `NODE_RED_TAB_NOT_FOUND` (see `pickTab`).
 *
 * @example
 * ```ts
 * const { flow } = nodeRedToRedflow(JSON.parse(await readFile('flows.json', 'utf8')), { tab: 'Order status' });
 * ```
 */
export function nodeRedToRedflow(flows: readonly NodeRedFlowNode[], options: { readonly tab?: string } = {}): ConvertedTab {
  const { id } = pickTab(flows, options.tab);
  const tab = flows.find((node): node is NodeRedTab => node.type === TAB_TYPE && node.id === id);
  const metadata = readMetadata(tab);
  const flow = readTab(id, tab, flows.filter((node) => node.z === id), metadata);
  return { flow, tab: id, ...(typeof metadata?.savedAt === 'string' && { savedAt: metadata.savedAt }) };
}

/** The document of a tab's nodes, with its metadata (when there is some). */
export function readTab(tabId: string, tab: NodeRedTab | undefined, tabNodes: readonly NodeRedFlowNode[], metadata: FlowMetadata | undefined): FlowDefinition {
  const mapped = tabNodes.filter((node) => isMappedType(node.type));
  const mappedIds = new Set(mapped.map((node) => node.id));
  const nodeMetadata = metadata?.nodes;
  const nodes: FlowNode[] = mapped.map((node) => flowNode(node, nodeMetadata !== undefined && Object.hasOwn(nodeMetadata, node.id) ? nodeMetadata[node.id] : undefined));
  const ids = new Set(nodes.map((node) => node.id));
  for (const carried of metadata?.carried ?? []) {
    if (ids.has(carried.id)) continue;
    ids.add(carried.id);
    nodes.push(carried);
  }
  if (metadata?.nodeOrder !== undefined) {
    const rank = new Map(metadata.nodeOrder.map((nodeId, index) => [nodeId, index]));
    const at = (node: FlowNode) => rank.get(node.id) ?? Number.MAX_SAFE_INTEGER;
    nodes.sort((a, b) => at(a) - at(b));
  }

  const wired = new Map<string, FlowEdge>();
  for (const node of mapped) {
    (node.wires ?? []).forEach((targets, port) => {
      for (const target of targets) {
        if (!mappedIds.has(target)) continue;
        const key = wireKey(node.id, port, target);
        if (wired.has(key)) continue;
        const kind = node.type === NodeRedType.Agent ? AGENT_OUTPUTS[port]?.kind : undefined;
        wired.set(key, { id: key, source: node.id, target, ...(kind !== undefined && { kind }) });
      }
    });
  }
  let edges: FlowEdge[] = [...wired.values()];
  if (metadata?.edges !== undefined) {
    edges = [];
    const used = new Set<string>();
    for (const entry of metadata.edges) {
      if ('wire' in entry) {
        const found = wired.get(entry.wire);
        if (found === undefined || used.has(entry.wire)) continue;
        used.add(entry.wire);
        edges.push({ ...entry.edge, source: found.source, target: found.target });
      } else if (ids.has(entry.edge.source) && ids.has(entry.edge.target)) {
        edges.push(entry.edge);
      }
    }
    // Wires drawn in Node-RED since: edges of their own.
    for (const [key, edge] of wired) if (!used.has(key)) edges.push(edge);
  }

  return { ...flowFields(tabId, tab, metadata), nodes, edges };
}

/** The document's own fields: from the metadata (its name and description following the tab's label and info), else the tab's. */
function flowFields(tabId: string, tab: NodeRedTab | undefined, metadata: FlowMetadata | undefined): Omit<FlowDefinition, 'nodes' | 'edges'> {
  const label = typeof tab?.label === 'string' && tab.label !== '' ? tab.label : undefined;
  const info = typeof tab?.info === 'string' && tab.info !== '' ? tab.info : undefined;
  if (metadata === undefined) return { id: tabId, ...(label !== undefined && { name: label }), ...(info !== undefined && { description: info }) };
  const fields = { ...metadata.flow };
  if (typeof fields.name === 'string' && fields.name !== '' && label !== undefined) fields.name = label;
  if (typeof fields.description === 'string' && fields.description !== '' && info !== undefined) fields.description = info;
  return fields;
}

/** A Node-RED node of a Redflow type as the document's node, with what its metadata adds. */
function flowNode(node: NodeRedFlowNode, metadata: NodeMetadata | undefined): FlowNode {
  if (!isMappedType(node.type)) throw new Error(`${node.type} is not a Redflow node type`);
  const info = NODE_RED_TYPES[node.type];
  const config: Record<string, unknown> = {};
  for (const [field, kind] of Object.entries(info.fields)) {
    const value = readField(kind, node[field]);
    if (value !== undefined) config[field] = value;
  }
  const name = typeof node.name === 'string' && node.name !== '' ? node.name : undefined;
  if (info.nameIsConfig && name !== undefined) config.name = name;
  for (const [field, value] of Object.entries(metadata?.config ?? {})) if (!Object.hasOwn(config, field)) setOwn(config, field, value);
  const label = !info.nameIsConfig && name !== undefined ? name : metadata?.label;
  const { x, y } = node;
  let position: FlowNode['position'];
  if (typeof x === 'number' && typeof y === 'number') {
    const placed = metadata?.placedAt;
    if (placed === undefined || placed[0] !== x || placed[1] !== y) position = { ...metadata?.position, x, y };
  }
  return {
    id: node.id,
    type: info.redflowType,
    ...(label !== undefined && { label }),
    ...((Object.keys(config).length > 0 || metadata?.emptyConfig === true) && { config }),
    ...(position !== undefined && { position }),
  };
}

/** Sets an own property, whatever its name (`__proto__` included: node ids and config keys come from files). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
