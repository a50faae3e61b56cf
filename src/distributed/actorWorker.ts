import type { NatsConnection } from '@nats-io/transport-node';
import { DEFAULT_SUBJECT_PREFIX, Storage, Subject, checkSubjectPrefix } from '../actors/subjects.js';
import { createNatsTransport } from '../actors/nats/natsTransport.js';
import { serveMemory, serveModel, serveTool } from '../actors/serveActors.js';
import type { Subscription, Transport } from '../actors/transport.js';
import { createNatsKvMemoryStore } from '../actors/memory/natsKvMemoryStore.js';
import type { ToolDefinition } from '../actors/tool.js';
import { loadValidFlow } from '../flows/loadValidFlow.js';
import { planRun } from '../runtime/runPlan.js';
import { buildModel } from '../runtime/buildModel.js';
import { buildTools } from '../runtime/buildTools.js';
import { checkSubjectTokens } from './flowSubjects.js';
import type { SubagentHost } from '../runtime/subagentTool.js';
import { clusterSubagents } from './clusterSubagents.js';

/** The kinds of actor a worker can host, defined once. */
export const WorkerRole = {
  Core: 'core',
  Model: 'model',
  Tool: 'tool',
  Memory: 'memory',
} as const;

/** One of {@link WorkerRole}'s values. */
export type WorkerRole = (typeof WorkerRole)[keyof typeof WorkerRole];

/** How a worker serves a tool: plainly, or answering a repeated idempotency key from storage. */
export type ToolServer = (transport: Transport, subject: string, tool: ToolDefinition) => Subscription;

/** Options of {@link startActorWorker}. */
export interface ActorWorkerOptions {
  readonly nc: NatsConnection;
  readonly flowPath: string;
  readonly roles: readonly Exclude<WorkerRole, 'core'>[];
  readonly prefix?: string;
  /** Serves each tool; default: plain request/reply. */
  readonly serveTool?: ToolServer;
  readonly log?: (line: string) => void;
  /** Folders besides the flow file's own where the files it names may be (`--allow-files`). */
  readonly allowFiles?: readonly string[];
  /**
   * Runs the flow's subagents (`agent.ref`) for the tool role. Default: on this cluster, each on
   * the core workers of its own prefix (`clusterSubagents`, `subagentPrefix`).
   */
  readonly subagents?: SubagentHost;
}

/** A running actor worker. */
export interface ActorWorker {
  /** The subjects this worker answers on. */
  readonly subjects: readonly string[];
  close(): Promise<void>;
}

/**
 * Hosts a flow's model, tools and/or memory as NATS services in queue groups: start more workers
 * for more capacity. In distributed mode `memory.kv` keeps conversations in the NATS KV bucket
 * `<prefix>-memory`, whatever store the flow names, since every worker must see the same memory.
 *
 * @example
 * ```ts
 * const worker = await startActorWorker({ nc, flowPath: 'flow.json', roles: ['model', 'tool'] });
 * ```
 */
export async function startActorWorker(options: ActorWorkerOptions): Promise<ActorWorker> {
  const prefix = options.prefix ?? DEFAULT_SUBJECT_PREFIX;
  checkSubjectPrefix(prefix);
  const log = options.log ?? (() => undefined);
  const allowFiles = options.allowFiles ?? [];
  const { flow, baseDir, flowPath } = await loadValidFlow(options.flowPath, undefined, allowFiles);
  checkSubjectTokens(flow);
  // Each role builds only what it serves: a model worker needs neither the tools' modules nor
  // their settings, a tool worker no model name or key.
  const plan = planRun(flow, baseDir);
  const model = options.roles.includes(WorkerRole.Model) ? await buildModel(plan, { allowFiles }) : undefined;
  const subagents = options.subagents ?? clusterSubagents({ nc: options.nc, prefix });
  const tools = options.roles.includes(WorkerRole.Tool) ? await buildTools(plan, { allowFiles, subagents }) : undefined;
  const transport = createNatsTransport(options.nc);
  const served: Subscription[] = [];
  const subjects: string[] = [];

  try {
    if (model) {
      const subject = Subject.model(prefix, plan.model.nodeId);
      // The answers' pieces go out live on <prefix>.runs.chunk.<traceId>, for whoever follows the run.
      served.push(serveModel(transport, subject, model, { chunkPrefix: prefix }));
      subjects.push(subject);
    }
    for (const tool of tools?.tools ?? []) {
      const subject = Subject.tool(prefix, tool.name);
      served.push((options.serveTool ?? serveTool)(transport, subject, tool));
      subjects.push(subject);
    }
    if (options.roles.includes(WorkerRole.Memory) && plan.memory) {
      const store = await createNatsKvMemoryStore(options.nc, { bucket: Storage.memoryBucket(prefix) });
      served.push(serveMemory(transport, prefix, plan.memory.nodeId, store));
      subjects.push(Subject.memoryLoad(prefix, plan.memory.nodeId), Subject.memoryAppend(prefix, plan.memory.nodeId));
    }
  } catch (error) {
    for (const subscription of served) subscription.unsubscribe();
    await transport.close();
    await tools?.close();
    throw error;
  }
  await options.nc.flush();
  log(`actor worker serving ${subjects.join(', ') || 'nothing'} for ${flowPath}`);

  return {
    subjects,
    async close() {
      for (const subscription of served) subscription.unsubscribe();
      await transport.close();
      await tools?.close();
    },
  };
}
