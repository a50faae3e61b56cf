import { hostname } from 'node:os';
import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { DEFAULT_SUBJECT_PREFIX, Storage, Subject, checkSubjectPrefix } from '../../actors/subjects.js';
import { watchRefusedSubscriptions } from '../refusedSubscriptions.js';
import { startMicroService, type MicroService } from '../microService.js';
import { createNatsTransport } from '../natsTransport.js';
import { serveMemory, serveModel, serveTool } from '../../runtime/serveActors.js';
import type { Subscription, Transport } from '../../actors/transport.js';
import { createNatsKvMemoryStore } from '../kv/natsKvMemoryStore.js';
import type { ToolDefinition } from '../../actors/tool.js';
import { loadValidFlow } from '../../flows/loadValidFlow.js';
import { planRun } from '../../runtime/runPlan.js';
import { asVerifier } from '../../runtime/embeddedActors.js';
import { buildModel } from '../../runtime/buildModel.js';
import { buildTools } from '../../runtime/buildTools.js';
import { checkSubjectTokens } from './flowSubjects.js';
import type { SubagentHost } from '../../runtime/subagentTool.js';
import { clusterSubagents } from './clusterSubagents.js';
import { serveMcpToolLists } from './mcpToolLists.js';
import { redflowVersion as version } from '../../version.js';
import type { BucketReplication } from '../jetstream/replication.js';


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
  /**
   * Serves each tool; default: plain request/reply, the calls' progress and attachments published
   * on the run's live subject (`serveTool`'s `livePrefix`).
   */
  readonly serveTool?: ToolServer;
  readonly log?: (line: string) => void;
  /** Folders besides the flow file's own where the files it names may be (`--allow-files`). */
  readonly allowFiles?: readonly string[];
  /**
   * Runs the flow's subagents (`agent.ref`) for the tool role. Default: on this cluster, each on
   * the core workers of its own prefix (`clusterSubagents`, `subagentPrefix`).
   */
  readonly subagents?: SubagentHost;
  /**
   * Serve each role as a NATS micro service, `redflow-model`, `redflow-tool` or `redflow-memory`,
   * one endpoint per subject, so that `$SRV.PING/INFO/STATS` (`nats micro ls`, `nats micro stats`)
   * find the worker and count its calls. Default true. The subjects and queue groups are the same
   * either way. A connection that may not subscribe to `$SRV.>` serves plainly, and `log` says so.
   */
  readonly microServices?: boolean;
  /** Replicas and placement of the memory bucket when this worker creates it. */
  readonly replication?: BucketReplication;
}

/** A running actor worker. */
export interface ActorWorker {
  /** The subjects this worker answers on. */
  readonly subjects: readonly string[];
  /** The NATS micro services it runs, one per role it serves (none when served plainly). */
  readonly services: readonly Pick<MicroService, 'name' | 'id' | 'calls'>[];
  close(): Promise<void>;
}

/**
 * Hosts a flow's model, tools and/or memory as NATS services in queue groups: start more workers
 * for more capacity. Each role is a NATS micro service ({@link ActorWorkerOptions.microServices}),
 * which operators discover and monitor with the `nats` CLI. In distributed mode `memory.kv` keeps conversations in the NATS KV bucket
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
  // The agent's own verifier (`verification.model`) is served by the model workers too.
  const verifier = model !== undefined && plan.verifier ? { nodeId: plan.verifier.nodeId, model: asVerifier(await buildModel({ model: plan.verifier, baseDir: plan.baseDir }, { allowFiles })) } : undefined;
  const subagents = options.subagents ?? clusterSubagents({ nc: options.nc, prefix });
  const tools = options.roles.includes(WorkerRole.Tool) ? await buildTools(plan, { allowFiles, subagents }) : undefined;
  const served: Subscription[] = [];
  const subjects: string[] = [];
  // A user that may not subscribe to a subject it serves is refused by the server on the
  // connection; without this check the worker would say it serves and never hear a request.
  const refusals = watchRefusedSubscriptions(options.nc, (subject) => !subject.startsWith('$SRV.'));
  const services: MicroService[] = [];
  const transports: Transport[] = [];
  /** The transport a role's actors are served on: through the role's micro service, when it can run. */
  const transportFor = async (role: Exclude<WorkerRole, 'core'>): Promise<Transport> => {
    let listener: MicroService | undefined;
    if (options.microServices !== false) {
      try {
        listener = await startMicroService(options.nc, {
          name: `redflow-${role}`,
          version,
          description: `Redflow ${role} actors of flow ${flow.definition.id ?? flowPath} on ${prefix}`,
          prefix,
          metadata: { 'redflow.prefix': prefix, 'redflow.flow': flow.definition.id ?? '', host: hostname(), pid: String(process.pid) },
          log,
        });
        services.push(listener);
      } catch (error) {
        if (!(error instanceof RedflowError && error.code === ErrorCode.TRANSPORT_PERMISSION_DENIED)) throw error;
        log(`${error.message}: serving the ${role} actors without it (${error.hint ?? ''})`);
      }
    }
    const transport = createNatsTransport(options.nc, listener === undefined ? {} : { listener });
    transports.push(transport);
    return transport;
  };

  try {
    if (model) {
      const subject = Subject.model(prefix, plan.model.nodeId);
      // The answers' pieces go out live on <prefix>.runs.chunk.<traceId>, for whoever follows the run.
      const modelTransport = await transportFor(WorkerRole.Model);
      served.push(serveModel(modelTransport, subject, model, { chunkPrefix: prefix }));
      subjects.push(subject);
      if (verifier !== undefined) {
        const verifierSubject = Subject.model(prefix, verifier.nodeId);
        served.push(serveModel(modelTransport, verifierSubject, verifier.model, { chunkPrefix: prefix }));
        subjects.push(verifierSubject);
      }
    }
    // A tool.mcp whose include list leaves no tool still answers its list (an empty one).
    if (tools !== undefined && (tools.tools.length > 0 || tools.groups.size > 0)) {
      const transport = await transportFor(WorkerRole.Tool);
      for (const tool of tools.tools) {
        const subject = Subject.tool(prefix, tool.name);
        // Plainly served calls say their progress and attachment on the run's live subject too.
        served.push(options.serveTool?.(transport, subject, tool) ?? serveTool(transport, subject, tool, { livePrefix: prefix }));
        subjects.push(subject);
      }
      // Core workers learn each MCP server's tools here: only this worker runs the server.
      const lists = serveMcpToolLists(transport, prefix, tools);
      served.push(...lists.served);
      subjects.push(...lists.subjects);
    }
    if (options.roles.includes(WorkerRole.Memory) && plan.memory) {
      const store = await createNatsKvMemoryStore(options.nc, { bucket: Storage.memoryBucket(prefix), ...(options.replication && { replication: options.replication }) });
      served.push(serveMemory(await transportFor(WorkerRole.Memory), prefix, plan.memory.nodeId, store));
      subjects.push(Subject.memoryLoad(prefix, plan.memory.nodeId), Subject.memoryAppend(prefix, plan.memory.nodeId));
    }
    const refused = await refusals.settle();
    if (refused.length > 0) {
      throw new RedflowError(
        errorInfo(ErrorCode.TRANSPORT_PERMISSION_DENIED, `NATS does not let this connection serve ${refused.join(', ')}: the server refused the subscription`, {
          hint: `grant this worker's user subscribe permission on ${refused.join(', ')} (see deploy/nats/redflow.conf; a subagent's actors are on its own prefix, <prefix>.agent-<name>)`,
        }),
      );
    }
  } catch (error) {
    for (const subscription of served) subscription.unsubscribe();
    await Promise.all([...services.map((service) => service.stop()), ...transports.map((transport) => transport.close())]);
    await tools?.close();
    throw error;
  } finally {
    refusals.stop();
  }
  log(`actor worker serving ${subjects.join(', ') || 'nothing'} for ${flowPath}`);
  for (const service of services) log(`NATS micro service ${service.name} ${service.id} (nats micro info ${service.name} ${service.id})`);

  return {
    subjects,
    services,
    async close() {
      for (const subscription of served) subscription.unsubscribe();
      await Promise.all(services.map((service) => service.stop()));
      await Promise.all(transports.map((transport) => transport.close()));
      await tools?.close();
    },
  };
}
