import type { FlowDefinition } from '../../contracts/schema-types.js';
import { ApiError, ErrorCode, errorInfo, RedflowError } from '../../errors.js';
import { type FlowDiagnostic, Severity, flowDiagnostic } from '../../flows/diagnostics.js';
import { FlowInvalidError } from '../../flows/loadValidFlow.js';
import { isNodeType, NodeType } from '../../flows/nodeTypes.js';
import { type FlowValidation, validateFlow } from '../../flows/validateFlow.js';
import { readMetadata } from '../../flows/nodeRed/flowMetadata.js';
import { nodeRedToRedflow } from '../../flows/nodeRed/fromNodeRed.js';
import { TAB_TYPE, redflowTabs, type NodeRedFlowNode, type NodeRedTab } from '../../flows/nodeRed/nodeRedFlows.js';
import { NODE_RED_TYPE_OF, redflowToNodeRed } from '../../flows/nodeRed/toNodeRed.js';
import type { FlowSummary } from '../apiTypes.js';
import { flowIdProblem } from '../flowIds.js';
import type { FlowStore } from '../flowStore.js';
import type { NodeRedAdmin } from './nodeRedAdmin.js';

/** When a tab Redflow's editor never saved last changed, as far as Redflow can tell: never. */
export const NEVER_SAVED = new Date(0).toISOString();

/** How many times a save reads the flows again when someone deployed in between. */
const SAVE_ATTEMPTS = 4;

/**
 * The flows of a Node-RED, as `redflow serve --node-red` edits them: each tab holding Redflow nodes
 * (or saved from Redflow's editor) is a flow, its id the tab's id, converted both ways by
 * `nodeRedToRedflow` and `redflowToNodeRed`. A save deploys the tab (only the changed tabs
 * restart), merged into the flows as they are at that moment: Node-RED's own nodes on the tab and
 * every other tab stay as they are, and a deploy by someone else in between is read and merged
 * again. Credentials stay in Node-RED's store, untouched.
 *
 * @example
 * ```ts
 * const flows = nodeRedFlowStore(nodeRedAdmin({ url: 'http://127.0.0.1:1880' }));
 * const { text } = await flows.read('7f3a0c1d5e2b4a69');
 * ```
 */
export function nodeRedFlowStore(admin: NodeRedAdmin): FlowStore {
  let saving: Promise<unknown> = Promise.resolve();
  /** One save or delete at a time from this server: they would only make each other read the flows again. */
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const next = saving.then(work, work);
    saving = next.catch(() => undefined);
    return next;
  };

  const tabOf = (flows: readonly NodeRedFlowNode[], id: string): NodeRedTab | undefined =>
    flows.find((node): node is NodeRedTab => node.type === TAB_TYPE && node.id === id);

  /** The tab's flow document, or 404 when the flows have no such tab. */
  const documentOf = (flows: readonly NodeRedFlowNode[], id: string) => {
    const tab = tabOf(flows, id);
    if (tab === undefined && !flows.some((node) => node.z === id)) throw notFound(id, admin.url);
    // A tab saved from Redflow's editor before its first node: its metadata is the flow.
    const hasRedflowNodes = redflowTabs(flows).some((found) => found.id === id);
    if (!hasRedflowNodes) {
      const metadata = readMetadata(tab);
      if (metadata === undefined) throw notFound(id, admin.url, 'holds no Redflow node');
      return { flow: { ...metadata.flow, nodes: [...(metadata.carried ?? [])], edges: [] } as FlowDefinition, savedAt: metadata.savedAt };
    }
    return nodeRedToRedflow(flows, { tab: id });
  };

  const validate = (body: unknown): FlowValidation => {
    const checked = validateFlow(body);
    const found = nodeRedDiagnostics(body);
    if (found.length === 0) return checked;
    return { ok: false, errors: [...(checked.ok ? [] : checked.errors), ...found], warnings: checked.warnings };
  };

  return {
    async list() {
      const { flows } = await admin.flows();
      const ids = new Set(redflowTabs(flows).map((tab) => tab.id));
      for (const node of flows) if (node.type === TAB_TYPE && readMetadata(node as NodeRedTab) !== undefined) ids.add(node.id);
      const summaries: FlowSummary[] = [];
      for (const id of ids) {
        // A tab id that is no flow id cannot be addressed through the API (Node-RED's own are 16 hex digits).
        if (flowIdProblem(id) !== undefined) continue;
        const { flow, savedAt } = documentOf(flows, id);
        summaries.push({
          id,
          ...(typeof flow.name === 'string' && { name: flow.name }),
          ...(typeof flow.description === 'string' && { description: flow.description }),
          updatedAt: savedAt ?? NEVER_SAVED,
          valid: validate(flow).ok,
        });
      }
      return summaries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },

    async read(id) {
      const { flows } = await admin.flows();
      const { flow, savedAt } = documentOf(flows, id);
      return { text: `${JSON.stringify(flow, null, 2)}\n`, updatedAt: savedAt ?? NEVER_SAVED };
    },

    save(id, flow) {
      if (id.includes('/')) {
        throw new ApiError(errorInfo(ErrorCode.FLOW_ID_INVALID, `"${id}" holds a "/": a Node-RED tab's id cannot`, { hint: 'name the flow without folders, e.g. "order-status"' }));
      }
      return serially(async () => {
        for (let attempt = 1; ; attempt++) {
          const { flows, rev } = await admin.flows();
          const created = tabOf(flows, id) === undefined && !flows.some((node) => node.z === id);
          const updatedAt = new Date().toISOString();
          const merged = redflowToNodeRed(flow, { tab: id, existing: flows, savedAt: updatedAt });
          if (await admin.deploy(merged.flows, rev)) return { created, updatedAt };
          if (attempt >= SAVE_ATTEMPTS) {
            throw new RedflowError(
              errorInfo(ErrorCode.NODE_RED_FLOWS_CHANGED, `the flows of Node-RED at ${admin.url} changed during each of ${SAVE_ATTEMPTS} attempts to save "${id}"`, {
                hint: 'save again once nobody else is deploying',
                retryable: true,
              }),
            );
          }
        }
      });
    },

    remove(id) {
      return serially(async () => {
        for (let attempt = 1; ; attempt++) {
          const { flows, rev } = await admin.flows();
          documentOf(flows, id);
          const kept = flows.filter((node) => node.z !== id && !(node.type === TAB_TYPE && node.id === id));
          if (await admin.deploy(kept, rev)) return;
          if (attempt >= SAVE_ATTEMPTS) {
            throw new RedflowError(errorInfo(ErrorCode.NODE_RED_FLOWS_CHANGED, `the flows of Node-RED at ${admin.url} changed during each of ${SAVE_ATTEMPTS} attempts to delete "${id}"`, { retryable: true }));
          }
        }
      });
    },

    async validate(body) {
      return validate(body);
    },

    async runnable(id) {
      const { flows } = await admin.flows();
      const { flow } = documentOf(flows, id);
      const checked = validate(flow);
      if (!checked.ok) throw new FlowInvalidError(id, checked.errors, checked.warnings);
      return { flow: checked.flow, flowPath: `${admin.url}/#flow/${encodeURIComponent(id)}` };
    },
  };
}

/**
 * What keeps a flow from running in Node-RED although it validates: nodes of kinds Node-RED's
 * agents cannot have (`tool.client`, `agent.ref`: kept with the flow, but not the agent's there),
 * and a connection string written in the flow (Node-RED keeps it in its credentials store).
 */
export function nodeRedDiagnostics(flow: unknown): FlowDiagnostic[] {
  const nodes = typeof flow === 'object' && flow !== null ? (flow as { nodes?: unknown }).nodes : undefined;
  if (!Array.isArray(nodes)) return [];
  const found: FlowDiagnostic[] = [];
  nodes.forEach((node: unknown, index) => {
    if (typeof node !== 'object' || node === null) return;
    const { id, type, config } = node as { id?: unknown; type?: unknown; config?: Record<string, unknown> };
    if (typeof id !== 'string' || !isNodeType(type)) return;
    if (NODE_RED_TYPE_OF[type] === undefined) {
      found.push(
        flowDiagnostic(Severity.Error, ErrorCode.NODE_RED_NODE_UNSUPPORTED, `node '${id}' is a ${type}, which an agent in Node-RED cannot have: it is kept with the flow, but the agent there runs without it`, {
          hint: 'remove it, or run the flow with redflow serve on a flows directory (redflow convert makes a flow file of it)',
          path: `nodes[${index}].type`,
          nodeId: id,
        }),
      );
    } else if (type === NodeType.ToolPostgres && typeof config?.connectionString === 'string') {
      found.push(
        flowDiagnostic(Severity.Error, ErrorCode.NODE_RED_SECRET_IN_FLOW, `tool '${id}' has its connectionString in the flow: Node-RED keeps it in its credentials store, never in its flows`, {
          hint: 'set connectionStringEnv instead, or enter the connection string in the node\'s dialog in Node-RED',
          path: `nodes[${index}].config.connectionString`,
          nodeId: id,
        }),
      );
    }
  });
  return found;
}

function notFound(id: string, url: string, why = 'does not exist'): ApiError {
  return new ApiError(errorInfo(ErrorCode.FLOW_NOT_FOUND, `the flow (Node-RED tab) "${id}" ${why} in Node-RED at ${url}`, { hint: 'GET /api/flows lists the tabs holding Redflow nodes' }));
}
