import type { NatsConnection } from '@nats-io/transport-node';
import type { ToolSpec } from '../../contracts/schema-types.js';
import { Subject } from '../../actors/subjects.js';
import type { Subscription, Transport } from '../../actors/transport.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { toolSpecs, type BuiltTools } from '../../runtime/buildTools.js';
import { createNatsTransport } from '../natsTransport.js';

/** How long a core worker waits, by default, for a tool worker to list an MCP server's tools. */
export const DEFAULT_MCP_LIST_WAIT_MS = 30_000;

/** What a tool worker answers on {@link mcpToolListSubject}. */
export interface McpToolList {
  readonly tools: readonly ToolSpec[];
}

/**
 * Where the tool workers of a flow say which tools its `tool.mcp` node `server` brings:
 * `<prefix>.tool.<server>.tools`. It is under the tool subjects (a user that may call the tools
 * may ask) and never a tool's own subject, since a tool's name is one token.
 *
 * @example
 * ```ts
 * mcpToolListSubject('redflow', 'fs'); // 'redflow.tool.fs.tools'
 * ```
 */
export function mcpToolListSubject(prefix: string, server: string): string {
  return `${Subject.tool(prefix, server)}.tools`;
}

/**
 * Serves, for each `tool.mcp` node a tool worker built, the specs of the tools its server brings
 * (as this worker's connection listed them): a core worker learns them here, so only tool workers
 * start MCP servers and hold their commands and secrets.
 *
 * @example
 * ```ts
 * const served = serveMcpToolLists(transport, 'redflow', await buildTools(plan));
 * ```
 */
export function serveMcpToolLists(transport: Transport, prefix: string, built: Pick<BuiltTools, 'tools' | 'groups'>): { subjects: string[]; served: Subscription[] } {
  const subjects: string[] = [];
  const served: Subscription[] = [];
  for (const [server, names] of built.groups) {
    const list: McpToolList = { tools: toolSpecs(built.tools.filter((tool) => names.includes(tool.name))) };
    const subject = mcpToolListSubject(prefix, server);
    served.push(transport.serve(subject, () => list));
    subjects.push(subject);
  }
  return { subjects, served };
}

/** Options of {@link askMcpToolSpecs}. */
export interface AskMcpToolSpecsOptions {
  /** Give up after this long without an answer (default {@link DEFAULT_MCP_LIST_WAIT_MS}). */
  readonly waitMs?: number;
}

/**
 * The `mcpToolSpecs` of a core worker (see `allowedTools`): asks the flow's tool workers for an
 * MCP server's tools, and asks again while none answers yet (they may be starting, as their MCP
 * servers are), until `waitMs` has passed.
 *
 * @throws RedflowError `MCP_SERVER_UNAVAILABLE` when no tool worker answered in time; the tool
 *   worker's own error when it answered with one.
 * @example
 * ```ts
 * const { agent, tools } = await allowedTools(plan, { mcpToolSpecs: askMcpToolSpecs(nc, 'redflow') });
 * ```
 */
export function askMcpToolSpecs(nc: NatsConnection, prefix: string, options: AskMcpToolSpecsOptions = {}): (server: string) => Promise<readonly ToolSpec[]> {
  const waitMs = options.waitMs ?? DEFAULT_MCP_LIST_WAIT_MS;
  return async (server) => {
    const subject = mcpToolListSubject(prefix, server);
    const transport = createNatsTransport(nc);
    const deadline = Date.now() + waitMs;
    let pauseMs = 100;
    let last = '';
    try {
      for (;;) {
        const left = deadline - Date.now();
        const reply = await transport.request<Record<string, never>, McpToolList>(subject, {}, { timeoutMs: Math.max(1, Math.min(left, 5000)) });
        if (reply.ok) return reply.data.tools;
        // Nobody serves it yet (or it did not answer in time): a tool worker may still be starting.
        if (reply.error.code !== ErrorCode.TRANSPORT_NO_RESPONDER && reply.error.code !== ErrorCode.TRANSPORT_TIMEOUT) throw new RedflowError(reply.error);
        last = reply.error.message;
        if (Date.now() + pauseMs >= deadline) break;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 2, 1000);
      }
    } finally {
      await transport.close();
    }
    throw new RedflowError(
      errorInfo(ErrorCode.MCP_SERVER_UNAVAILABLE, `MCP server '${server}': no tool worker listed its tools on ${subject} within ${waitMs} ms (${last})`, {
        hint: 'start a tool worker of this flow on the same prefix (redflow worker <flow> --role tool): it runs the MCP server, and core workers learn its tools from it',
        retryable: true,
      }),
    );
  };
}
