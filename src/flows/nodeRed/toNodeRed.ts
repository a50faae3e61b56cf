import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { FlowDefinition, FlowEdge, FlowNode } from '../../contracts/schema-types.js';
import { validators } from '../../contracts/schemas.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { inferEdgeKind } from '../edgeRules.js';
import { NodeType } from '../nodeTypes.js';
import { validateFlow } from '../validateFlow.js';
import { AGENT_OUTPUTS, NODE_RED_TYPES, NodeRedType, isMappedType, readField, type FieldKind } from './nodeRedTypes.js';
import { readMetadata, wireKey, withMetadata, type EdgeMetadata, type FlowMetadata, type NodeMetadata } from './flowMetadata.js';
import { readTab, setOwn } from './fromNodeRed.js';
import { TAB_TYPE, type NodeRedFlowNode, type NodeRedTab } from './nodeRedFlows.js';

type MappedType = Exclude<NodeRedType, typeof NodeRedType.ToolOut>;
type MutableNode = { id: string; type: string; z?: string; wires?: string[][]; [property: string]: unknown };

/** The Node-RED type of each Redflow node kind Node-RED has a node for (`tool.client` has none). */
export const NODE_RED_TYPE_OF: Readonly<Partial<Record<NodeType, MappedType>>> = Object.fromEntries(
  (Object.keys(NODE_RED_TYPES) as MappedType[]).map((type) => [NODE_RED_TYPES[type].redflowType, type]),
);

/** How many outputs each Redflow type has in Node-RED: what wires it can hold. */
const OUTPUTS: Readonly<Record<MappedType, number>> = {
  [NodeRedType.Agent]: AGENT_OUTPUTS.length,
  [NodeRedType.Input]: 1,
  [NodeRedType.Response]: 1,
  [NodeRedType.ToolIn]: 1,
  [NodeRedType.End]: 0,
  [NodeRedType.Model]: 0,
  [NodeRedType.ToolHttp]: 0,
  [NodeRedType.ToolPostgres]: 0,
  [NodeRedType.ToolModule]: 0,
  [NodeRedType.ToolMcp]: 0,
  [NodeRedType.Memory]: 0,
};

/** Options of {@link redflowToNodeRed}. */
export interface ToNodeRedOptions {
  /** The tab's id; default the document's `id` when it can be one, else an id made from the document. */
  readonly tab?: string;
  /**
   * Node-RED's flows as they are (all tabs): the result is these flows with the tab replaced, its
   * Node-RED nodes (and their wires to the agent's nodes) kept, and each Redflow node changed only
   * where the document changed it.
   */
  readonly existing?: readonly NodeRedFlowNode[];
  /** Recorded in the tab's metadata as when Redflow's editor saved it. */
  readonly savedAt?: string;
}

/**
 * Converts a Redflow flow document into Node-RED flows JSON: a tab holding one Node-RED node per
 * node (the Redflow type of its kind, its config fields as properties, `name` its label or a
 * tool's `config.name`, `x`/`y` its position) and one wire per edge (the agent's edges on the
 * output of their kind). What nodes and wires cannot say (the document's `id`, `version`, `start`,
 * edge ids and labels, edges no wire stands for, `tool.client` nodes) is kept in the tab's
 * {@link FlowMetadata}, so {@link nodeRedToRedflow} gives the same document back. Credentials stay
 * out: a `tool.postgres` connection string written in the flow is refused.
 *
 * @throws RedflowError `FLOW_SCHEMA_MISMATCH` for a document that is not a flow,
 *   `NODE_RED_SECRET_IN_FLOW`, or `NODE_RED_ID_CONFLICT` for a node id another tab of `existing` uses.
 *
 * @example
 * ```ts
 * const { flows } = redflowToNodeRed(JSON.parse(await readFile('flow.json', 'utf8')));
 * await writeFile('node-red.json', JSON.stringify(flows, null, 2));
 * ```
 */
export function redflowToNodeRed(doc: FlowDefinition, options: ToNodeRedOptions = {}): { readonly flows: NodeRedFlowNode[]; readonly tab: string } {
  assertFlow(doc);
  assertNoSecret(doc);
  const tabId = options.tab ?? defaultTabId(doc);
  const existing = options.existing ?? [];
  const oldTab = existing.find((node): node is NodeRedTab => node.type === TAB_TYPE && node.id === tabId);
  const oldNodes = existing.filter((node) => node.z === tabId);
  const oldById = new Map(oldNodes.map((node) => [node.id, node]));

  const mappedDoc = doc.nodes.filter((node) => NODE_RED_TYPE_OF[node.type as NodeType] !== undefined);
  const mappedIds = new Set(mappedDoc.map((node) => node.id));
  assertNoConflict(mappedDoc, tabId, existing);
  const removed = new Set(oldNodes.filter((node) => isMappedType(node.type) && !mappedIds.has(node.id)).map((node) => node.id));

  const nodeMetadata = new Map<string, NodeMetadata>();
  const built = new Map<string, MutableNode>();
  let unplaced = 0;
  for (const node of mappedDoc) {
    const type = NODE_RED_TYPE_OF[node.type as NodeType] as MappedType;
    const old = oldById.get(node.id);
    const base: MutableNode = old !== undefined && old.type === type ? structuredClone(old) as MutableNode : { id: node.id, type, z: tabId };
    const metadata: { -readonly [K in keyof NodeMetadata]: NodeMetadata[K] } = {};
    writeNode(base, node, type, metadata);
    if (node.position === undefined && (old === undefined || (typeof base.x === 'number' && typeof base.y === 'number'))) {
      // Node-RED's editor needs a place for every node: a new one without a position gets one.
      if (old === undefined) {
        base.x = 140 + 220 * (unplaced % 4);
        base.y = 80 + 80 * Math.floor(unplaced / 4);
        unplaced += 1;
      }
      metadata.placedAt = [base.x as number, base.y as number];
    }
    if (Object.keys(metadata).length > 0) nodeMetadata.set(node.id, metadata);
    built.set(node.id, base);
  }

  // Edges: one wire each where the source has an output for it, else kept in the metadata.
  const known = new Map<string, string[][]>([...built].map(([id, node]) => [id, Array.from({ length: OUTPUTS[node.type as MappedType] }, () => [])]));
  const edges: EdgeMetadata[] = [];
  const usedWires = new Set<string>();
  const typeOf = new Map(doc.nodes.map((node) => [node.id, node.type]));
  for (const edge of doc.edges) {
    const ports = known.get(edge.source);
    const target = mappedIds.has(edge.target) ? edge.target : undefined;
    const port = ports === undefined || target === undefined ? undefined : portOf(built.get(edge.source)?.type, edge, typeOf);
    const key = port === undefined || target === undefined ? undefined : wireKey(edge.source, port, target);
    if (ports === undefined || port === undefined || key === undefined || target === undefined || port >= ports.length || usedWires.has(key)) {
      edges.push({ edge });
      continue;
    }
    usedWires.add(key);
    ports[port]?.push(target);
    const { source: _source, target: _target, ...rest } = edge;
    edges.push({ wire: key, edge: rest });
  }
  for (const [id, node] of built) {
    const wires = mergeWires(node.wires, known.get(id) ?? [], mappedIds, removed);
    if (node.wires !== undefined || wires.some((targets) => targets.length > 0) || !oldById.has(id)) node.wires = wires;
  }

  // The tab's nodes where they were, new ones after them; Node-RED's own nodes kept.
  const replaced = new Map<string, NodeRedFlowNode | undefined>();
  for (const old of oldNodes) {
    if (built.get(old.id)?.type === old.type) replaced.set(old.id, built.get(old.id));
    else replaced.set(old.id, removed.has(old.id) || built.has(old.id) ? undefined : withoutWiresTo(old, removed));
  }
  const added = mappedDoc.filter((node) => replaced.get(node.id) === undefined).map((node) => built.get(node.id) as MutableNode);
  const tabNodes = [...oldNodes.flatMap((old) => replaced.get(old.id) ?? []), ...added];

  const carried = doc.nodes.filter((node) => !mappedIds.has(node.id));
  const { nodes: _nodes, edges: _edges, ...fields } = doc;
  const full: FlowMetadata = {
    flow: fields,
    nodeOrder: doc.nodes.map((node) => node.id),
    ...(nodeMetadata.size > 0 && { nodes: Object.fromEntries(nodeMetadata) }),
    ...(carried.length > 0 && { carried }),
    edges,
    ...(options.savedAt !== undefined && { savedAt: options.savedAt }),
  };
  const tab = tabNode(oldTab, tabId, doc);
  // Nodes exported without their tab stay so, unless the document needs the tab's metadata.
  const tabless = oldTab === undefined && oldNodes.length > 0;
  const metadata = smallestMetadata(doc, tabId, tabless ? undefined : tab, tabNodes, full, readMetadata(oldTab) !== undefined || options.savedAt !== undefined);
  const env = withMetadata(tab.env as NodeRedTab['env'], metadata);
  if (env.length > 0 || oldTab?.env !== undefined) tab.env = env;
  else delete tab.env;

  const flows = placeTab(existing, tab as NodeRedTab, replaced, added);
  return { flows: tabless && metadata === undefined ? flows.filter((node) => node !== tab) : flows, tab: tabId };
}

/**
 * The tab's id when none is given: the document's `id` when it is a plain one (letters, digits,
 * `_`, `-`, `.`), else one made from the document, so converting it again gives the same id.
 */
export function defaultTabId(doc: FlowDefinition): string {
  const id = doc.id;
  if (typeof id === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(id) && !doc.nodes.some((node) => node.id === id)) return id;
  return createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 16);
}

function assertFlow(doc: unknown): asserts doc is FlowDefinition {
  if (!validators.flow(doc)) {
    const checked = validateFlow(doc);
    const first = checked.ok ? undefined : checked.errors[0];
    throw new RedflowError(
      errorInfo(ErrorCode.FLOW_SCHEMA_MISMATCH, first?.message ?? 'the document is not a Redflow flow', { hint: 'see schemas/flow.schema.json; `redflow validate` lists every problem' }),
    );
  }
  const seen = new Set<string>();
  for (const node of doc.nodes) {
    if (seen.has(node.id)) {
      throw new RedflowError(errorInfo(ErrorCode.DUPLICATE_NODE_ID, `two nodes have the id '${node.id}': Node-RED needs one id per node`, { hint: 'give every node a unique id' }));
    }
    seen.add(node.id);
  }
}

function assertNoSecret(doc: FlowDefinition): void {
  const node = doc.nodes.find((candidate) => candidate.type === NodeType.ToolPostgres && typeof candidate.config?.connectionString === 'string');
  if (node === undefined) return;
  throw new RedflowError(
    errorInfo(ErrorCode.NODE_RED_SECRET_IN_FLOW, `tool '${node.id}' has its connectionString written in the flow: Node-RED keeps it in its credentials store, never in its flows`, {
      hint: 'set connectionStringEnv (the variable holding it) instead, or enter the connection string in the node\'s dialog in Node-RED',
      path: `nodes[${doc.nodes.indexOf(node)}].config.connectionString`,
    }),
  );
}

function assertNoConflict(nodes: readonly FlowNode[], tabId: string, existing: readonly NodeRedFlowNode[]): void {
  // Ids of this tab's Redflow nodes are the document's own; any other node's id is taken.
  const others = new Map(existing.filter((node) => !(node.z === tabId && isMappedType(node.type))).map((node) => [node.id, node]));
  const taken = nodes.filter((node) => node.id === tabId || others.has(node.id));
  if (taken.length === 0) return;
  const where = (id: string) => {
    const other = others.get(id);
    if (other === undefined || id === tabId) return 'the tab itself';
    if (other.z === tabId) return `a ${other.type} node of this tab`;
    return other.z === undefined ? `a ${other.type} node` : `a ${other.type} node of tab ${other.z}`;
  };
  throw new RedflowError(
    errorInfo(ErrorCode.NODE_RED_ID_CONFLICT, `node id${taken.length > 1 ? 's' : ''} ${taken.map((node) => `'${node.id}' (${where(node.id)})`).join(', ')} already taken in Node-RED`, {
      hint: 'node ids are unique across a Node-RED: rename the node in the flow (ids of new nodes in Redflow\'s editor are its name, e.g. model_2)',
    }),
  );
}

/** Writes a document node's label and config onto its Node-RED node, changing only what differs. */
function writeNode(base: MutableNode, node: FlowNode, type: MappedType, metadata: { -readonly [K in keyof NodeMetadata]: NodeMetadata[K] }): void {
  const info = NODE_RED_TYPES[type];
  const config = node.config ?? {};
  if (node.config !== undefined && Object.keys(node.config).length === 0) metadata.emptyConfig = true;
  const extras: Record<string, unknown> = {};
  const clear = (field: string, kind: FieldKind | undefined) => {
    if (!Object.hasOwn(base, field)) return;
    if (kind === undefined ? typeof base[field] === 'string' && base[field] !== '' : readField(kind, base[field]) !== undefined) base[field] = '';
  };
  for (const [field, kind] of Object.entries(info.fields)) {
    const value = Object.hasOwn(config, field) ? config[field] : undefined;
    if (value === undefined) {
      clear(field, kind);
    } else if (isDeepStrictEqual(readField(kind, value), value)) {
      if (!Object.hasOwn(base, field) || !isDeepStrictEqual(readField(kind, base[field]), value)) base[field] = value;
    } else {
      // A value Node-RED would read back as another (an empty text, a number written as text).
      setOwn(extras, field, value);
      clear(field, kind);
    }
  }
  for (const [field, value] of Object.entries(config)) {
    if (Object.hasOwn(info.fields, field) || (info.nameIsConfig && field === 'name')) continue;
    setOwn(extras, field, value);
  }
  const setName = (name: unknown): boolean => {
    if (typeof name !== 'string' || name === '') return false;
    if (base.name !== name) base.name = name;
    return true;
  };
  if (info.nameIsConfig) {
    const name = Object.hasOwn(config, 'name') ? config.name : undefined;
    if (!setName(name)) {
      if (name !== undefined) extras.name = name;
      clear('name', undefined);
    }
    if (node.label !== undefined) metadata.label = node.label;
  } else if (!setName(node.label)) {
    if (node.label !== undefined) metadata.label = node.label;
    clear('name', undefined);
  }
  if (Object.keys(extras).length > 0) metadata.config = extras;
  const position = node.position;
  if (position !== undefined) {
    if (base.x !== position.x) base.x = position.x;
    if (base.y !== position.y) base.y = position.y;
    if (Object.keys(position).some((key) => key !== 'x' && key !== 'y')) metadata.position = position;
  }
}

/** The output an edge leaves its source on: the agent's by the edge's kind, the first of any other. */
function portOf(sourceType: string | undefined, edge: FlowEdge, typeOf: ReadonlyMap<string, string>): number | undefined {
  if (sourceType === undefined || OUTPUTS[sourceType as MappedType] === 0) return undefined;
  if (sourceType !== NodeRedType.Agent) return 0;
  const kind = edge.kind ?? inferEdgeKind(typeOf.get(edge.source) ?? '', typeOf.get(edge.target) ?? '');
  const port = AGENT_OUTPUTS.findIndex((output) => output.kind === kind);
  return port === -1 ? 0 : port;
}

/**
 * A node's wires: on each output, the Redflow targets the edges give and the Node-RED nodes it was
 * wired to (kept); unchanged outputs keep their order.
 */
function mergeWires(old: MutableNode['wires'], known: readonly string[][], mapped: ReadonlySet<string>, removed: ReadonlySet<string>): string[][] {
  return known.map((targets, port) => {
    const before = old?.[port] ?? [];
    const beforeKnown = before.filter((target) => mapped.has(target));
    const same = before.every((target) => !removed.has(target)) && beforeKnown.length === targets.length && targets.every((target) => beforeKnown.includes(target));
    if (same) return [...before];
    return [...before.filter((target) => !removed.has(target) && (!mapped.has(target) || targets.includes(target))), ...targets.filter((target) => !before.includes(target))];
  });
}

function withoutWiresTo(node: NodeRedFlowNode, removed: ReadonlySet<string>): NodeRedFlowNode {
  if (node.wires === undefined || !node.wires.some((targets) => targets.some((target) => removed.has(target)))) return node;
  return { ...node, wires: node.wires.map((targets) => targets.filter((target) => !removed.has(target))) };
}

/** The tab node: its label the document's name, its info the description, other properties as they were. */
function tabNode(old: NodeRedTab | undefined, tabId: string, doc: FlowDefinition): MutableNode {
  const tab: MutableNode = old !== undefined ? (structuredClone(old) as MutableNode) : { id: tabId, type: TAB_TYPE, label: '', disabled: false, info: '' };
  // Without a name the tab keeps its label (the metadata then says the document has none).
  const name = typeof doc.name === 'string' && doc.name !== '' ? doc.name : undefined;
  if (name !== undefined && tab.label !== name) tab.label = name;
  if (old === undefined && name === undefined) tab.label = doc.id ?? tabId;
  const info = typeof doc.description === 'string' ? doc.description : '';
  if (info !== '' ? tab.info !== info : typeof tab.info === 'string' && tab.info !== '') tab.info = info;
  return tab;
}

/**
 * The least metadata that gives the document back: none when Node-RED's nodes and wires say it all
 * (unless the tab had some, which is then kept up to date), else without the edges or the node
 * order when those read back the same anyway.
 */
function smallestMetadata(doc: FlowDefinition, tabId: string, tab: MutableNode | undefined, nodes: readonly NodeRedFlowNode[], full: FlowMetadata, keep: boolean): FlowMetadata | undefined {
  const gives = (metadata: FlowMetadata | undefined) => isDeepStrictEqual(readTab(tabId, tab as NodeRedTab, nodes, metadata), doc);
  if (!keep && gives(undefined)) return undefined;
  let metadata = full;
  const { edges: _edges, ...withoutEdges } = metadata;
  if (gives(withoutEdges)) metadata = withoutEdges;
  const { nodeOrder: _order, ...withoutOrder } = metadata;
  if (gives(withoutOrder)) metadata = withoutOrder;
  return metadata;
}

/**
 * `existing` with the tab and each of its nodes replaced in place (or left out when `replaced` maps
 * it to nothing), the added nodes after the tab's last one; a new tab goes last.
 */
function placeTab(existing: readonly NodeRedFlowNode[], tab: NodeRedTab, replaced: ReadonlyMap<string, NodeRedFlowNode | undefined>, added: readonly NodeRedFlowNode[]): NodeRedFlowNode[] {
  const last = existing.reduce((at, node, index) => (node.z === tab.id || (node.type === TAB_TYPE && node.id === tab.id) ? index : at), -1);
  if (last === -1) return [...existing, tab, ...added];
  const out: NodeRedFlowNode[] = [];
  existing.forEach((node, index) => {
    if (node.type === TAB_TYPE && node.id === tab.id) out.push(tab);
    else if (node.z !== tab.id) out.push(node);
    else {
      const now = replaced.get(node.id);
      if (now !== undefined) out.push(now);
    }
    if (index === last) out.push(...added);
  });
  // A tab that was not there yet, its nodes were: the tab before them.
  return out.some((node) => node === tab) ? out : [tab, ...out];
}
