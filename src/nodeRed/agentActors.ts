import type { AgentCoreReactConfig, ToolFlowConfig, ToolHttpConfig, ToolPostgresConfig, ToolSpec } from '../contracts/schema-types.js';
import type { InputValidator } from '../contracts/schemas.js';
import { serveMemory, serveModel, serveTool } from '../runtime/serveActors.js';
import { DEFAULT_SUBJECT_PREFIX, Subject } from '../actors/subjects.js';
import { asVerifier } from '../runtime/embeddedActors.js';
import type { Subscription } from '../actors/transport.js';
import type { ResolvedFlow } from '../flows/validateFlow.js';
import { NodeType } from '../flows/nodeTypes.js';
import type { ActorSubjects } from '../runtime/transportActor.js';
import type { RunMemory } from '../runtime/runSession.js';
import { buildMemoryStore } from '../runtime/buildMemoryStore.js';
import { buildModel } from '../runtime/buildModel.js';
import { buildTools, expandToolGroups } from '../runtime/buildTools.js';
import { planRun, type PlannedTool, type RunPlan } from '../runtime/runPlan.js';
import { flowToolHandler } from './flowTool.js';
import { createNodeRedTransport, type NodeRedTransport } from './nodeRedTransport.js';

/** Credentials of a node, from Node-RED's credentials store (never in the flows file). */
export type CredentialsOf = (nodeId: string) => Readonly<Record<string, string | undefined>> | undefined;

/** Options of {@link serveAgentActors}. */
export interface AgentActorsOptions {
  /** The agent's wiring as a validated Redflow flow. */
  readonly flow: ResolvedFlow;
  /** Relative paths (tool modules, answers files, a file memory) start here: Node-RED's user directory. */
  readonly baseDir: string;
  /** Other folders a flow may name files in. */
  readonly allowFiles?: readonly string[];
  readonly credentials: CredentialsOf;
  /** `RED.nodes.getNode` and `RED.util.generateId`, for the transport. */
  readonly getNode: Parameters<typeof createNodeRedTransport>[0]['getNode'];
  readonly newId: () => string;
  /** The environment for model settings and connection strings (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
}

/** An agent's actors, served on its Node-RED transport: what every run of it needs. */
export interface AgentActors {
  readonly agent: AgentCoreReactConfig;
  /** The allowed tools, as the model is told about them. */
  readonly tools: readonly ToolSpec[];
  readonly transport: NodeRedTransport;
  readonly subjects: ActorSubjects;
  /** The memory's subjects and turns, when a memory node is wired. */
  readonly memory?: Omit<RunMemory, 'conversationId'>;
  readonly checkInput?: InputValidator;
  /** The model node's model name: the agent's `budget` prices and counts its calls by it. */
  readonly modelName: string;
  /** Stops serving and releases what the tools hold (a `tool.postgres` pool). */
  close(): Promise<void>;
}

/**
 * Builds the actors an agent's wiring describes, with the builders an embedded run uses
 * (`buildModel`, `buildTools`, `buildMemoryStore` on the flow's run plan), and serves each one on
 * the agent's own Node-RED transport, routed to the node it comes from: a request for the model
 * goes to the model node, a tool call to the tool's node. Credentials are added here: the model's
 * API key, a `tool.postgres` connection string, a `tool.http` Authorization header. A `tool.mcp`
 * node's server is started (or reached) here and its connection kept until `close()`: each of its
 * tools is served through that node.
 *
 * @throws RedflowError the builders' codes (`MODEL_KEY_MISSING`, `MODEL_CONFIG_INVALID`,
 *   `TOOL_MODULE_INVALID`, `TOOL_CONFIG_INVALID`, `DEPENDENCY_MISSING`, `FLOW_FILE_OUTSIDE_ROOTS`,
 *   `MCP_SERVER_UNAVAILABLE` and the other `MCP_*` codes of `loadMcpTools`).
 */
export async function serveAgentActors(options: AgentActorsOptions): Promise<AgentActors> {
  const plan = planRun(options.flow, options.baseDir);
  const env = modelEnvironment(plan, options.credentials, options.env ?? process.env);
  const allowFiles = options.allowFiles ?? [];
  const model = await buildModel(plan, { env, allowFiles });
  const regular = plan.tools.filter((tool) => tool.type !== NodeType.ToolFlow).map((tool) => withCredentials(tool, options.credentials));
  const built = await buildTools({ baseDir: plan.baseDir, tools: regular }, { env, allowFiles });
  const memory = buildMemoryStore(plan, { allowFiles });

  const prefix = DEFAULT_SUBJECT_PREFIX;
  const transport = createNodeRedTransport({ getNode: options.getNode, newId: options.newId });
  const served: Subscription[] = [];
  const modelSubject = Subject.model(prefix, plan.model.nodeId);
  transport.route(modelSubject, plan.model.nodeId);
  served.push(serveModel(transport, modelSubject, model));
  // The agent's own verifier (`verification.model`): a model node it names, or inline settings.
  const verifierSubject = plan.verifier && Subject.model(prefix, plan.verifier.nodeId);
  if (plan.verifier && verifierSubject) {
    // A verifier node of its own answers through it; inline settings through the model node.
    transport.route(verifierSubject, options.flow.verifier === undefined ? plan.model.nodeId : plan.verifier.nodeId);
    served.push(serveModel(transport, verifierSubject, asVerifier(await buildModel({ model: plan.verifier, baseDir: plan.baseDir }, { env, allowFiles }))));
  }

  // A call says where its work lives (`tool.attached`) on the run's live subject, which the run hears.
  const live = { livePrefix: prefix };
  const specs: ToolSpec[] = [];
  for (const planned of plan.tools) {
    if (planned.type === NodeType.ToolMcp) {
      // Each of the server's tools is called through its node, which holds the server's connection.
      for (const name of built.groups.get(planned.name) ?? []) {
        const tool = built.tools.find((candidate) => candidate.name === name);
        if (tool === undefined) continue;
        const subject = Subject.tool(prefix, name);
        transport.route(subject, planned.nodeId);
        served.push(serveTool(transport, subject, tool, live));
        specs.push({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
      }
      continue;
    }
    const subject = Subject.tool(prefix, planned.name);
    transport.route(subject, planned.nodeId);
    if (planned.type === NodeType.ToolFlow) {
      const spec = flowToolSpec(planned.name, planned.config);
      served.push(transport.serve(subject, flowToolHandler(spec)));
      specs.push({ name: spec.name, description: spec.description, inputSchema: spec.inputSchema });
      continue;
    }
    const tool = built.tools.find((candidate) => candidate.name === planned.name);
    if (tool === undefined) continue;
    served.push(serveTool(transport, subject, tool, live));
    specs.push({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
  }

  let runMemory: AgentActors['memory'];
  if (memory !== undefined) {
    served.push(serveMemory(transport, prefix, memory.nodeId, memory.store));
    const loadSubject = Subject.memoryLoad(prefix, memory.nodeId);
    const appendSubject = Subject.memoryAppend(prefix, memory.nodeId);
    transport.route(loadSubject, memory.nodeId);
    transport.route(appendSubject, memory.nodeId);
    runMemory = { loadSubject, appendSubject, maxTurns: memory.maxTurns };
  }

  // A tool.mcp node's name in allowedTools and requiresApproval stands for its server's tools.
  const agent = expandToolGroups(plan.agent, built.groups);
  const allowed = new Set(agent.allowedTools);
  let closed = false;
  return {
    agent,
    tools: specs.filter((spec) => allowed.has(spec.name)),
    transport,
    subjects: { model: modelSubject, ...(verifierSubject && { verifier: verifierSubject }), tool: (name) => Subject.tool(prefix, name), live: (traceId) => Subject.runChunk(prefix, traceId) },
    ...(runMemory !== undefined && { memory: runMemory }),
    ...(plan.checkInput !== undefined && { checkInput: plan.checkInput }),
    modelName: plan.model.config.model ?? '',
    async close() {
      if (closed) return;
      closed = true;
      for (const subscription of served) subscription.unsubscribe();
      await transport.close();
      await built.close();
    },
  };
}

/** The environment the model is built with: the API key from the model node's credentials, under the variable it reads. */
function modelEnvironment(plan: RunPlan, credentials: CredentialsOf, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const apiKey = credentials(plan.model.nodeId)?.apiKey;
  if (apiKey === undefined || apiKey === '') return env;
  return { ...env, [plan.model.config.apiKeyEnv ?? 'OPENAI_API_KEY']: apiKey };
}

function withCredentials(tool: PlannedTool, credentials: CredentialsOf): PlannedTool {
  const secret = credentials(tool.nodeId);
  if (tool.type === NodeType.ToolPostgres && secret?.connectionString) {
    const config: ToolPostgresConfig = { ...tool.config, connectionString: secret.connectionString };
    return { ...tool, config };
  }
  if (tool.type === NodeType.ToolHttp && secret?.authorization) {
    const config: ToolHttpConfig = { ...tool.config, headers: { ...tool.config.headers, Authorization: secret.authorization } };
    return { ...tool, config };
  }
  return tool;
}

function flowToolSpec(name: string, config: ToolFlowConfig) {
  return {
    name,
    description: config.description ?? '',
    // Without a schema any object is taken (the wiring check warns TOOL_WITHOUT_INPUT_SCHEMA).
    inputSchema: (config.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
    ...(config.timeoutMs !== undefined && { timeoutMs: config.timeoutMs }),
  };
}
