import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpEndpoint } from '../server/server.js';
import { createFlowMcpServer, type FlowMcpServerOptions } from './flowMcpServer.js';

/** Sessions kept at most: past it, the least recently used one is closed (its client starts a new one). */
const MAX_SESSIONS = 64;

/**
 * The Streamable HTTP endpoint of `redflow serve --mcp` (`/mcp`): one MCP session per client, each
 * its own {@link createFlowMcpServer} on the SDK's `StreamableHTTPServerTransport`, so a client's
 * cancellation reaches the call it cancels. The server checks the token before a request gets here.
 *
 * @example
 * ```ts
 * const server = await createRedflowServer({ flowsDir: 'flows', mcp: (ports) => createMcpHttpEndpoint({ ...ports, howToAnswer }) });
 * ```
 */
export function createMcpHttpEndpoint(options: FlowMcpServerOptions): McpEndpoint {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let closing = false;
  // A flow left out is said once for the endpoint, not once for each session that lists the tools.
  const told = new Set<string>();
  const served: FlowMcpServerOptions = {
    ...options,
    onSkipped: (flow) => {
      const key = `${flow.flowId}\n${flow.error.code}\n${flow.error.message}`;
      if (told.has(key)) return;
      told.add(key);
      options.onSkipped?.(flow);
    },
  };

  const open = async (): Promise<StreamableHTTPServerTransport> => {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        for (const [oldest, older] of sessions) {
          if (sessions.size <= MAX_SESSIONS) break;
          sessions.delete(oldest);
          void older.close().catch(() => undefined);
        }
      },
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await createFlowMcpServer(served).connect(transport);
    return transport;
  };

  return {
    async handle(req: IncomingMessage, res: ServerResponse) {
      const header = req.headers['mcp-session-id'];
      const sessionId = typeof header === 'string' ? header : undefined;
      const session = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (session !== undefined) {
        // Used last: the last to be closed when there are too many.
        sessions.delete(sessionId as string);
        sessions.set(sessionId as string, session);
        return session.handleRequest(req, res);
      }
      if (sessionId !== undefined || closing) {
        // MCP's answer to a session it does not know: 404, and the client initializes a new one.
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: closing ? 'the server is shutting down' : 'no such MCP session: initialize a new one' }, id: null }),
        );
        return;
      }
      // A new session starts with an initialize request; the transport refuses anything else.
      const transport = await open();
      await transport.handleRequest(req, res);
      if (transport.sessionId === undefined) await transport.close();
    },
    async close() {
      closing = true;
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((transport) => transport.close().catch(() => undefined)));
    },
  };
}
