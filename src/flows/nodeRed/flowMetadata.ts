import type { FlowDefinition, FlowEdge, FlowNode } from '../../contracts/schema-types.js';
import type { NodeRedTab } from './nodeRedFlows.js';

/**
 * The environment variable of a tab that keeps what of a Redflow flow document Node-RED's nodes and
 * wires cannot hold: the document's own fields (`id`, `version`, `start`, …), edge ids, labels and
 * handles, the edges no wire can stand for (a memory wired to the agent), nodes of kinds Node-RED
 * has no node for (`tool.client`), node labels of tools, and config values no node property keeps.
 * A tab's env survives deploys from Node-RED's own editor, unlike a property it does not know.
 */
export const METADATA_ENV = 'REDFLOW_FLOW';

/** What a node keeps beyond its Node-RED node's properties. */
export interface NodeMetadata {
  /** A tool's label (its `name` is `config.name`), or an empty label. */
  readonly label?: string;
  /** Config values no property of its Node-RED type keeps as they are. */
  readonly config?: Readonly<Record<string, unknown>>;
  /** The document gave the node `config: {}`. */
  readonly emptyConfig?: true;
  /** The document gave no position: Node-RED got this one, left out again while unchanged. */
  readonly placedAt?: readonly [number, number];
  /** The position, when it has more than `x` and `y`. */
  readonly position?: Readonly<Record<string, unknown>>;
}

/** An edge as the document has it: on a wire (`wire` is its key), or none (`edge`). */
export type EdgeMetadata =
  | { readonly wire: string; readonly edge: Omit<FlowEdge, 'source' | 'target'> }
  | { readonly edge: FlowEdge };

/** What a tab keeps of its Redflow flow document in {@link METADATA_ENV}. */
export interface FlowMetadata {
  /** The document without its nodes and edges (`name` and `description` mirror the tab's label and info). */
  readonly flow: Readonly<Omit<FlowDefinition, 'nodes' | 'edges'>>;
  /** Nodes of the document in its order, when Node-RED's order differs. */
  readonly nodeOrder?: readonly string[];
  readonly nodes?: Readonly<Record<string, NodeMetadata>>;
  /** Nodes of kinds Node-RED has no node for, as the document has them. */
  readonly carried?: readonly FlowNode[];
  /** Every edge of the document in its order, when any differs from what its wire says. */
  readonly edges?: readonly EdgeMetadata[];
  /** When the flow was last saved from Redflow's editor (ISO time). */
  readonly savedAt?: string;
}

/** The key of a wire: its source, output and target. */
export function wireKey(source: string, port: number, target: string): string {
  return `${source}:${port}:${target}`;
}

/** The metadata a tab holds, or `undefined` (none, or not readable: the tab is then read as Node-RED has it). */
export function readMetadata(tab: NodeRedTab | undefined): FlowMetadata | undefined {
  const entry = Array.isArray(tab?.env) ? tab.env.find((variable) => variable?.name === METADATA_ENV) : undefined;
  if (entry === undefined) return undefined;
  let value: unknown = entry.value;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const flow = (value as { flow?: unknown }).flow;
  return typeof flow === 'object' && flow !== null && !Array.isArray(flow) ? (value as FlowMetadata) : undefined;
}

/** The tab's env with the metadata set (or removed when `undefined`), its other variables kept in place. */
export function withMetadata(env: NodeRedTab['env'], metadata: FlowMetadata | undefined): NonNullable<NodeRedTab['env']> {
  const others = Array.isArray(env) ? env : [];
  const entry = metadata === undefined ? undefined : { name: METADATA_ENV, type: 'json', value: JSON.stringify(metadata) };
  const at = others.findIndex((variable) => variable?.name === METADATA_ENV);
  if (at === -1) return entry === undefined ? [...others] : [...others, entry];
  return entry === undefined ? others.filter((_, index) => index !== at) : others.map((variable, index) => (index === at ? entry : variable));
}
