import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode as McpErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '../errors.js';
import { redflowVersion } from '../version.js';
import { callFlowTool, type FlowCallPorts } from './flowCall.js';
import { listFlowTools, type FlowTool, type SkippedFlow } from './flowTools.js';

/** Options of {@link createFlowMcpServer}. */
export interface FlowMcpServerOptions extends FlowCallPorts {
  /** Only these flow ids are offered (`--only`); default every valid flow of the store. */
  readonly only?: readonly string[];
  /** Told of each flow left out, once for each reason (for the server's log: stderr). */
  readonly onSkipped?: (flow: SkippedFlow) => void;
}

/**
 * An MCP server (the official SDK's `Server`) whose tools are the flows of a store: `tools/list`
 * reads the store on each request (a flow saved meanwhile is offered), and `tools/call` runs the
 * flow through the run backend ({@link callFlowTool}), with progress notifications of its activity
 * when the client sent a progress token, and the client's cancellation aborting the run.
 * Connect it to one transport (stdio, or one Streamable HTTP session).
 *
 * @example
 * ```ts
 * const server = createFlowMcpServer({ flows, backend, howToAnswer: answerOnLog('.redflow/runs') });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createFlowMcpServer(options: FlowMcpServerOptions): Server {
  const server = new Server(
    { name: 'redflow', title: 'Redflow agents', version: redflowVersion },
    {
      capabilities: { tools: {} },
      instructions: 'Each tool runs a Redflow agent (a ReAct flow) to its answer. A result that says the run waits needs a person to answer it as the result says.',
    },
  );
  const told = new Set<string>();
  const tools = async (): Promise<readonly FlowTool[]> => {
    const { tools: offered, skipped } = await listFlowTools(options.flows, options.only);
    for (const flow of skipped) {
      const key = `${flow.flowId}\n${flow.error.code}\n${flow.error.message}`;
      if (told.has(key)) continue;
      told.add(key);
      options.onSkipped?.(flow);
    }
    return offered;
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await tools()).map((tool) => ({
      name: tool.name,
      ...(tool.title !== undefined && { title: tool.title }),
      description: tool.description,
      inputSchema: tool.inputSchema,
      // No outputSchema: MCP then requires structuredContent in every result that is not an
      // error, and a run that waits for a person answers with text.
      annotations: { readOnlyHint: false, openWorldHint: true },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const tool = (await tools()).find((each) => each.name === name);
    if (tool === undefined) {
      throw new McpError(McpErrorCode.InvalidParams, `${ErrorCode.MCP_TOOL_UNKNOWN}: this server has no tool ${JSON.stringify(name.slice(0, 100))}`, {
        code: ErrorCode.MCP_TOOL_UNKNOWN,
        hint: 'tools/list gives the tools: one per valid flow of the flows folder (or of --only)',
      });
    }
    const progressToken = request.params._meta?.progressToken;
    let progress = 0;
    // Sent in order, and all before the result: a client forgets a call's progress once it has its result.
    let sent = Promise.resolve();
    const onProgress =
      progressToken === undefined
        ? undefined
        : (message: string) => {
            const params = { progressToken, progress: ++progress, message };
            sent = sent.then(() => extra.sendNotification({ method: 'notifications/progress', params })).catch(() => undefined);
          };
    const result = await callFlowTool(options, { tool, args: request.params.arguments, signal: extra.signal, ...(onProgress !== undefined && { onProgress }) });
    await sent;
    return result;
  });
  return server;
}
