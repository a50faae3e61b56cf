import path from 'node:path';
import type { AgentCoreReactConfig, ToolSpec } from '../contracts/schema-types.js';
import { NodeType } from '../flows/nodeTypes.js';
import { flowToolOutsideNodeRed } from '../flows/nodeRedOnly.js';
import type { ToolDefinition } from '../actors/tool.js';
import { createHttpTool } from '../actors/tools/httpTool.js';
import { loadModuleTool } from '../actors/tools/moduleTool.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { flowFileInsideRoots } from '../files/fileRoots.js';
import type { PlannedTool, RunPlan } from './runPlan.js';
import { DEFAULT_SUBAGENT_TIMEOUT_MS, subagentToolSpec, type SubagentHost } from './subagentTool.js';

/** Options of {@link buildTools} and {@link allowedToolSpecs}. */
export interface ToolBuildOptions {
  /** Environment of `tool.postgres` connection strings, checked when the tool is built (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Folders besides the flow file's own where a `tool.module` may be (`--allow-files`). */
  readonly allowFiles?: readonly string[];
  /**
   * Runs the flow's subagents (`agent.ref`): makes the tool each one's calls go to. Without it, a
   * flow with a subagent cannot have its tools served here (`TOOL_CONFIG_INVALID`).
   */
  readonly subagents?: SubagentHost;
  /**
   * Where a host that does not serve `tool.mcp` nodes (a cluster's core worker) learns the tools
   * a server brings: their specs, as the process that serves them listed them. Without it, a flow
   * with a `tool.mcp` cannot have its specs made here (`TOOL_CONFIG_INVALID`).
   */
  readonly mcpToolSpecs?: (server: string) => Promise<readonly ToolSpec[]>;
}

/** A plan's tools, built. */
export interface BuiltTools {
  readonly tools: readonly ToolDefinition[];
  /**
   * The names of the tools each `tool.mcp` node brought, by the node's name: the name stands for
   * them in `allowedTools` and `requiresApproval` (see `expandToolGroups`).
   */
  readonly groups: ReadonlyMap<string, readonly string[]>;
  /**
   * Releases what the tools hold (a `tool.postgres` pool): call it once they are no longer served.
   * Never rejects; safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * Builds the plan's tools (or those in `only`): `tool.http`, `tool.module` (the module is imported
 * here) and `tool.postgres` (its connection string must be there now; its pool is made at its first call). Only what serves the tools calls
 * it (an embedded run, a tool worker); on a failure, what was built is released before it throws.
 *
 * @throws RedflowError `TOOL_MODULE_INVALID` or `TOOL_CONFIG_INVALID` for a tool that cannot be built;
 *   `DEPENDENCY_MISSING` when a `tool.postgres` is served without the `pg` package, or a
 *   TypeScript `tool.module` is loaded without `tsx`.
 *
 * @example
 * ```ts
 * const { tools, close } = await buildTools(planRun(flow, baseDir));
 * ```
 */
export async function buildTools(
  plan: Pick<RunPlan, 'tools' | 'baseDir'>,
  options: ToolBuildOptions = {},
  only?: ReadonlySet<string>,
): Promise<BuiltTools> {
  return buildSome(plan, options, only, true);
}

/** {@link buildTools}, where `serving` false builds them for their specs only (no connection string needed). */
async function buildSome(
  plan: Pick<RunPlan, 'tools' | 'baseDir'>,
  options: ToolBuildOptions,
  only: ReadonlySet<string> | undefined,
  serving: boolean,
): Promise<BuiltTools> {
  const tools: ToolDefinition[] = [];
  const groups = new Map<string, string[]>();
  const closers: (() => Promise<void>)[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(closers.map((closeOne) => closeOne()));
  };
  try {
    for (const planned of plan.tools) {
      if (only && !only.has(planned.name)) continue;
      // A client tool is run by the run's client: nothing here builds or serves it.
      if (planned.type === NodeType.ToolClient) continue;
      if (planned.type === NodeType.ToolFlow) throw flowToolOutsideNodeRed(planned.name);
      if (planned.type === NodeType.ToolMcp) {
        // Its tools are the server's: only a process that serves them asks it (see allowedToolSpecs).
        if (!serving) throw mcpOutsideEmbedded(planned.name);
        // Loaded only for flows that use it: it leads to the MCP SDK.
        const { loadMcpTools } = await import('../actors/tools/mcpTools.js');
        const served = await loadMcpTools(planned.name, planned.config, { baseDir: plan.baseDir, ...(options.env && { env: options.env }) });
        closers.push(served.close);
        tools.push(...served.tools);
        groups.set(planned.name, served.tools.map((tool) => tool.name));
        continue;
      }
      if (planned.type === NodeType.AgentRef) {
        // Its spec comes from its node; only a host that serves it needs its flow.
        if (serving) tools.push(await buildSubagent(planned, plan.baseDir, options));
        continue;
      }
      if (planned.type === NodeType.AgentA2a) {
        // Built for its spec too: its description is the remote agent's card. Loaded only for
        // flows that use it: it leads to the A2A SDK.
        const { connectA2aAgent } = await import('../actors/tools/a2aTool.js');
        tools.push(await connectA2aAgent(planned.name, planned.config, { ...(options.env && { env: options.env }) }));
        continue;
      }
      const built = await buildTool(planned, plan.baseDir, options, serving);
      tools.push(built.tool);
      if (built.close) closers.push(built.close);
    }
    // Every name the model may call: the built tools' and those of the tools not built here.
    const unbuilt = plan.tools.filter((planned) => planned.type === NodeType.ToolClient || (planned.type === NodeType.AgentRef && !serving));
    checkUniqueNames([...tools.map((tool) => tool.name), ...unbuilt.map((planned) => planned.name)], groups);
  } catch (error) {
    await close();
    throw error;
  }
  return { tools, groups, close };
}

async function buildTool(
  planned: Exclude<PlannedTool, { type: typeof NodeType.ToolClient | typeof NodeType.ToolFlow | typeof NodeType.AgentRef | typeof NodeType.AgentA2a | typeof NodeType.ToolMcp }>,
  baseDir: string,
  options: ToolBuildOptions,
  serving: boolean,
): Promise<{ tool: ToolDefinition; close?: () => Promise<void> }> {
  switch (planned.type) {
    case NodeType.ToolHttp:
      return { tool: createHttpTool({ ...planned.config, name: planned.name }) };
    case NodeType.ToolModule:
      return { tool: await loadModuleTool({ ...planned.config, name: planned.name }, baseDir, options.allowFiles) };
    case NodeType.ToolPostgres: {
      // Checked here, not at the first call the tool would make: a run without its database stops
      // before the model is asked anything. Not for the specs only: a core worker needs none.
      // Loaded, as the tool is, only for flows that use it.
      const { missingConnectionStringEnv, noConnectionStringError } = await import('../actors/tools/postgresConnectionEnv.js');
      const missing = serving ? missingConnectionStringEnv(planned.config, options.env ?? process.env) : undefined;
      if (missing !== undefined) throw noConnectionStringError(`postgres tool '${planned.name}'`, missing);
      // Loaded only for flows that use it: the PostgreSQL driver is not needed otherwise.
      const { createPostgresTool } = await import('../actors/tools/postgresTool.js');
      // `pg` is an optional peer: without it, DEPENDENCY_MISSING now rather than at the first call.
      if (serving) await (await import('../actors/tools/postgresDriver.js')).loadPostgresDriver();
      const tool = createPostgresTool({ ...planned.config, name: planned.name }, { env: options.env ?? process.env });
      return { tool, close: () => tool.close() };
    }
  }
}

/**
 * A subagent's tool, from its host: its flow file must be inside the folders allowed for flow
 * files (`FLOW_FILE_OUTSIDE_ROOTS`), checked here before anything of it is read.
 */
async function buildSubagent(
  planned: Extract<PlannedTool, { type: typeof NodeType.AgentRef }>,
  baseDir: string,
  options: ToolBuildOptions,
): Promise<ToolDefinition> {
  if (options.subagents === undefined) {
    throw new RedflowError(
      errorInfo(ErrorCode.TOOL_CONFIG_INVALID, `subagent "${planned.name}" cannot run here: this host runs no subagents`, {
        hint: 'run the flow with redflow run, redflow serve or redflow worker (embedded or on a cluster)',
      }),
    );
  }
  const roots = [baseDir, ...(options.allowFiles ?? []).map((dir) => path.resolve(dir))];
  const flowPath = await flowFileInsideRoots(planned.config.flow, 'subagent flow', { baseDir, roots });
  const spec = subagentToolSpec(planned.name, planned.config);
  return options.subagents({
    name: planned.name,
    nodeId: planned.nodeId,
    flow: planned.config.flow,
    flowPath,
    roots,
    timeoutMs: planned.config.timeoutMs ?? DEFAULT_SUBAGENT_TIMEOUT_MS,
    description: spec.description,
  });
}

/**
 * The specs (name, description, input schema) of the tools the agent may call, in plan order:
 * what the core shows the model and checks the model's tool input against.
 *
 * The tools are built for it and released at once, without a call: `tool.http` and
 * `tool.postgres` take their spec from the node, and open nothing until called. A `tool.module`'s
 * spec lives in its module (the flow names only the file), so the module is imported, though its
 * `execute` never runs here. A core worker therefore needs the flow's tool modules and their
 * dependencies, as every worker of the flow does: they all load the same flow file. Asking the
 * tool workers for the specs instead would tie a core worker's start to theirs, and a spec could
 * then differ between two core workers.
 *
 * @example
 * ```ts
 * const tools = await allowedToolSpecs(planRun(flow, baseDir));
 * ```
 */
export async function allowedToolSpecs(plan: Pick<RunPlan, 'tools' | 'baseDir' | 'agent'>, options: ToolBuildOptions = {}): Promise<ToolSpec[]> {
  return (await allowedTools(plan, options)).tools;
}

/**
 * {@link allowedToolSpecs}, with the agent config the run records: when the flow has `tool.mcp`
 * nodes, their tools' specs come from `options.mcpToolSpecs` (the process that serves them) and
 * each node's name in `allowedTools` and `requiresApproval` stands for its tools (see
 * {@link expandToolGroups}).
 *
 * @throws RedflowError `TOOL_CONFIG_INVALID` for a `tool.mcp` without `options.mcpToolSpecs`; what
 *   `mcpToolSpecs` throws (`MCP_SERVER_UNAVAILABLE` when nothing serves the server).
 * @example
 * ```ts
 * const { agent, tools } = await allowedTools(planRun(flow, baseDir), { mcpToolSpecs: (server) => askToolWorker(server) });
 * ```
 */
export async function allowedTools(
  plan: Pick<RunPlan, 'tools' | 'baseDir' | 'agent'>,
  options: ToolBuildOptions = {},
): Promise<{ agent: AgentCoreReactConfig; tools: ToolSpec[] }> {
  const allowed = new Set(plan.agent.allowedTools);
  const servers = plan.tools.filter((planned) => planned.type === NodeType.ToolMcp);
  const serverNames = new Set(servers.map((server) => server.name));
  const built = await buildSome(plan, options, new Set([...allowed].filter((name) => !serverNames.has(name))), false);
  await built.close();
  if (servers.length === 0) return { agent: plan.agent, tools: specsInPlanOrder(plan, toolSpecs(built.tools), allowed) };
  const groups = new Map<string, readonly string[]>();
  const specs = toolSpecs(built.tools);
  for (const server of servers) {
    if (options.mcpToolSpecs === undefined) throw mcpOutsideEmbedded(server.name);
    const listed = await options.mcpToolSpecs(server.name);
    groups.set(server.name, listed.map((spec) => spec.name));
    specs.push(...listed);
  }
  const agent = expandToolGroups(plan.agent, groups);
  // A server's tools are allowed by its node's name or by their own.
  const expanded = new Set(agent.allowedTools);
  return { agent, tools: specsInPlanOrder(plan, specs, undefined, groups).filter((spec) => expanded.has(spec.name)) };
}

/**
 * The specs of the plan's tools (those in `only`, when given) in plan order: the built tools'
 * specs, each client tool's spec from its node (`executor: "client"`) and each subagent's from its
 * node (`subagent`), so every mode shows the model the same list in the same order.
 */
export function specsInPlanOrder(
  plan: Pick<RunPlan, 'tools'>,
  built: readonly ToolSpec[],
  only?: ReadonlySet<string>,
  groups?: ReadonlyMap<string, readonly string[]>,
): ToolSpec[] {
  const byName = new Map(built.map((spec) => [spec.name, spec]));
  const specs: ToolSpec[] = [];
  for (const planned of plan.tools) {
    if (only && !only.has(planned.name)) continue;
    if (planned.type === NodeType.ToolMcp) {
      // An MCP server's tools, in the order it lists them.
      for (const name of groups?.get(planned.name) ?? []) {
        const spec = byName.get(name);
        if (spec) specs.push(spec);
      }
      continue;
    }
    const spec =
      planned.type === NodeType.ToolClient
        ? clientToolSpec(planned)
        : planned.type === NodeType.AgentRef
          ? subagentToolSpec(planned.name, planned.config)
          : byName.get(planned.name);
    if (spec) specs.push(spec);
  }
  return specs;
}

/** What the model is told about a client tool: its node's name, description and input schema. */
function clientToolSpec(planned: Extract<PlannedTool, { type: typeof NodeType.ToolClient }>): ToolSpec {
  return {
    name: planned.name,
    description: planned.config.description ?? `${planned.name}, run by the client`,
    inputSchema: planned.config.inputSchema ?? { type: 'object' },
    executor: 'client',
  };
}

/** The specs of built tools: what a run records and the core validates against. */
export function toolSpecs(tools: readonly ToolDefinition[]): ToolSpec[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
}

/**
 * The agent config with each group's name (a `tool.mcp` node's) in `allowedTools` and
 * `requiresApproval` replaced by the names of the tools it brought: what the run records and the
 * statechart checks the model's calls against. `agent` itself when there is no group.
 *
 * @example
 * ```ts
 * expandToolGroups({ strategy: 'react', maxIterations: 5, allowedTools: ['fs'] }, new Map([['fs', ['read_file', 'list_directory']]]));
 * // { …, allowedTools: ['read_file', 'list_directory'] }
 * ```
 */
export function expandToolGroups(agent: AgentCoreReactConfig, groups: ReadonlyMap<string, readonly string[]>): AgentCoreReactConfig {
  if (groups.size === 0) return agent;
  const expand = (names: readonly string[]): string[] => [...new Set(names.flatMap((name) => groups.get(name) ?? [name]))];
  return {
    ...agent,
    allowedTools: expand(agent.allowedTools),
    ...(agent.requiresApproval && { requiresApproval: expand(agent.requiresApproval) }),
  };
}

/**
 * Two tools with one name would make the model's call ambiguous: an MCP server's tool named like
 * another tool of the flow (or of another server) is `DUPLICATE_TOOL_NAME`, never renamed behind
 * the flow author's back.
 *
 * @throws RedflowError `DUPLICATE_TOOL_NAME` naming the tool and where each one comes from.
 * @example
 * ```ts
 * checkUniqueNames(['echo', 'echo'], new Map([['everything', ['echo']]])); // throws DUPLICATE_TOOL_NAME
 * ```
 */
export function checkUniqueNames(names: readonly string[], groups: ReadonlyMap<string, readonly string[]>): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (!seen.has(name)) {
      seen.add(name);
      continue;
    }
    const servers = [...groups].filter(([, tools]) => tools.includes(name)).map(([server]) => `'${server}'`);
    throw new RedflowError(
      errorInfo(ErrorCode.DUPLICATE_TOOL_NAME, `two tools are named '${name}' (one comes from the MCP server ${servers.join(' and ')})`, {
        hint: 'set a "prefix" on the tool.mcp node (e.g. "fs_"), or leave the tool out with its "exclude" list',
      }),
    );
  }
}

/**
 * A flow with a `tool.mcp` where its tools cannot be offered: a host asked for specs only (no
 * server runs there) that has no `mcpToolSpecs` to learn them from.
 */
export function mcpOutsideEmbedded(name: string, where = 'here'): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.TOOL_CONFIG_INVALID, `MCP server '${name}' (tool.mcp) cannot be used ${where}: its tools are known only where the server runs`, {
      hint: 'run the flow embedded (redflow run, redflow serve), from code, in Node-RED, or on a cluster (redflow worker), whose tool workers run the server',
    }),
  );
}
