import type { TriggerInputConfig } from '../contracts/schema-types.js';
import { compileUserSchema } from '../contracts/schemas.js';
import { ErrorCode, RedflowError, errorInfo, toErrorInfo, type ErrorInfo } from '../errors.js';
import { TOOL_NAME_PATTERN, type ResolvedFlow } from '../flows/validateFlow.js';
import type { FlowStore } from '../server/flowStore.js';

/** A JSON Schema of an object: what MCP requires a tool's `inputSchema` to be. */
export type ObjectSchema = { readonly type: 'object' } & Readonly<Record<string, unknown>>;

/** One flow offered as an MCP tool. */
export interface FlowTool {
  /** The tool's name: the flow id with every character outside `A-Z a-z 0-9 _ -` made `_`. */
  readonly name: string;
  readonly flowId: string;
  /** The flow's `name`, for clients that show a title. */
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: ObjectSchema;
  /**
   * True when the run's input is the call's `input` argument (a trigger without an object schema);
   * false when it is the arguments object itself (the trigger's schema is an object's).
   */
  readonly wrapsInput: boolean;
  /** The agent's outputSchema: a finished run's validated output is the call's structuredContent. */
  readonly outputSchema?: object;
}

/** A flow that is not offered, and why (for a warning on the server's log). */
export interface SkippedFlow {
  readonly flowId: string;
  readonly error: ErrorInfo;
}

/** The tools of a flows store, and the flows left out. */
export interface FlowToolList {
  readonly tools: readonly FlowTool[];
  readonly skipped: readonly SkippedFlow[];
}

/**
 * The MCP tool name of a flow id. Names keep to `A-Z a-z 0-9 _ -` and at most 64 characters: MCP
 * allows `.` too and 128 characters, but clients hand the names to model APIs that do not.
 *
 * @example
 * ```ts
 * toolNameOf('support/order-status'); // 'support_order-status'
 * ```
 */
export function toolNameOf(flowId: string): string {
  return flowId.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * Describes a valid flow as an MCP tool: its description from the flow (or its trigger), its input
 * schema from the trigger's (an object schema as it is; any other wrapped as `{ input }`; none:
 * `{ input: string }`).
 *
 * @example
 * ```ts
 * const { flow } = await flows.runnable('order-status');
 * flowTool('order-status', flow).inputSchema; // { type: 'object', properties: { input: { type: 'string', … } }, required: ['input'] }
 * ```
 */
export function flowTool(flowId: string, flow: ResolvedFlow): FlowTool {
  const trigger = (flow.trigger?.config ?? {}) as TriggerInputConfig;
  const given = trigger.inputSchema;
  const asked = trigger.description ?? 'what to ask the agent';
  const { name, description } = flow.definition;
  const objectSchema = given !== undefined && given.type === 'object';
  const inputSchema: ObjectSchema = objectSchema
    ? (given as ObjectSchema)
    : {
        type: 'object',
        properties: { input: given === undefined ? { type: 'string', description: asked } : { description: asked, ...given } },
        required: ['input'],
        additionalProperties: false,
      };
  const outputSchema = flow.agent.config.outputSchema;
  return {
    name: toolNameOf(flowId),
    flowId,
    ...(name !== undefined && { title: name }),
    description: description ?? name ?? trigger.description ?? `Runs the Redflow flow ${flowId}: a ReAct agent.`,
    inputSchema,
    wrapsInput: !objectSchema,
    ...(typeof outputSchema === 'object' && outputSchema !== null && { outputSchema }),
  };
}

/**
 * The run input of a call's arguments, checked against the tool's input schema before anything runs.
 *
 * @throws RedflowError MCP_ARGUMENTS_INVALID
 *
 * @example
 * ```ts
 * runInputOf(tool, { input: 'Where is A-1001?' }); // 'Where is A-1001?'
 * ```
 */
export function runInputOf(tool: FlowTool, args: Readonly<Record<string, unknown>> | undefined): unknown {
  const given = args ?? {};
  const verdict = compileUserSchema(tool.inputSchema)(given);
  if (verdict !== true) {
    throw new RedflowError(
      errorInfo(ErrorCode.MCP_ARGUMENTS_INVALID, `the arguments of ${tool.name} do not match its input schema: ${verdict}`, {
        hint: `send what tools/list gives as ${tool.name}'s inputSchema${tool.wrapsInput ? ', e.g. { "input": "…" }' : ''}`,
      }),
    );
  }
  return tool.wrapsInput ? given.input : given;
}

/**
 * Lists the flows of a store as MCP tools. A flow that does not validate, or whose id makes no
 * usable tool name (too long, or the name of another flow's too), is skipped and said why; with
 * `only`, just those flows are offered (one that is not there is skipped, `FLOW_NOT_FOUND`).
 *
 * @example
 * ```ts
 * const { tools, skipped } = await listFlowTools(createFlowStore('flows'));
 * for (const flow of skipped) console.error(`${flow.flowId} is not offered: ${flow.error.message}`);
 * ```
 */
export async function listFlowTools(flows: FlowStore, only?: readonly string[]): Promise<FlowToolList> {
  const listed = await flows.list();
  const wanted = only === undefined ? listed.map((flow) => flow.id) : [...only];
  const known = new Set(listed.map((flow) => flow.id));
  const tools: FlowTool[] = [];
  const skipped: SkippedFlow[] = [];
  for (const flowId of wanted) {
    if (!known.has(flowId)) {
      skipped.push({ flowId, error: errorInfo(ErrorCode.FLOW_NOT_FOUND, `there is no flow "${flowId}" in the flows folder`, { hint: 'give --only the ids of flows in --flows: their paths there without .json' }) });
      continue;
    }
    try {
      tools.push(flowTool(flowId, (await flows.runnable(flowId)).flow));
    } catch (thrown) {
      skipped.push({ flowId, error: toErrorInfo(thrown, ErrorCode.FLOW_SCHEMA_MISMATCH) });
    }
  }
  const named = new Map<string, FlowTool[]>();
  for (const tool of tools) named.set(tool.name, [...(named.get(tool.name) ?? []), tool]);
  const offered = tools.filter((tool) => {
    const same = named.get(tool.name) ?? [];
    const problem = !TOOL_NAME_PATTERN.test(tool.name)
      ? `its tool name ${tool.name} is longer than 64 characters`
      : same.length > 1
        ? `its tool name ${tool.name} is also the name of ${same.filter((other) => other !== tool).map((other) => `"${other.flowId}"`).join(', ')}`
        : undefined;
    if (problem === undefined) return true;
    skipped.push({
      flowId: tool.flowId,
      error: errorInfo(ErrorCode.MCP_TOOL_NAME_INVALID, `the flow "${tool.flowId}" is not offered: ${problem}`, {
        hint: 'rename or move the flow file: a tool name is the flow id with each character outside A-Z a-z 0-9 _ - made _, at most 64 characters',
      }),
    });
    return false;
  });
  return { tools: offered, skipped };
}
