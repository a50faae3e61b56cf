import path from 'node:path';
// Types only: the SDK itself is imported when a server is first reached.
import type { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { ToolMcpConfig } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { registerSecret } from '../../secrets/secrets.js';

/** Limit of starting or reaching a server and listing its tools, when `connectTimeoutMs` is not set. */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 15_000;

/** A tool as an MCP server lists it (`tools/list`): the fields Redflow uses. */
export interface McpListedTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
}

/** A `tools/call` result as the server sent it (`CallToolResult`). */
export interface McpCallResult {
  readonly content?: readonly Record<string, unknown>[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** What one call is given: the run's signal (aborting it cancels the call on the server), a time limit, a key. */
export interface McpCallOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly idempotencyKey: string;
  /**
   * Takes the server's progress notifications for this call (`notifications/progress`): with it the
   * call carries a progress token. `timeoutMs` still bounds the whole call.
   */
  readonly onProgress?: (report: { readonly progress: number; readonly total?: number; readonly message?: string }) => void;
}

/** One MCP server, reached through the SDK's client; reconnected (a stdio server restarted) when it went away. */
export interface McpConnection {
  /** The server's tools: listed once per connection, listed again when the server says they changed. */
  tools(): Promise<readonly McpListedTool[]>;
  call(tool: string, args: Record<string, unknown>, options: McpCallOptions): Promise<McpCallResult>;
  /** Ends the connection (stops a stdio server). Never rejects; safe to call more than once. */
  close(): Promise<void>;
}

/** Where a server is and what it is called, as a `tool.mcp` node gives it. */
export interface McpServerSettings {
  /** The node's name: how errors name the server. */
  readonly name: string;
  readonly config: ToolMcpConfig;
  /** The flow file's folder: a relative `cwd` starts here. */
  readonly baseDir: string;
  /** Where `$NAME` env values and `headersFromEnv` are read (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Largest message read from a stdio server, in bytes; a larger one closes the connection. */
  readonly maxMessageBytes: number;
}


/** The client of one connection, with what it learnt: its tools, and why it closed. */
interface Live {
  readonly client: SdkClient;
  tools: Promise<readonly McpListedTool[]> | undefined;
  closed: boolean;
  lastError: Error | undefined;
  /** Where each call in flight that takes progress wants it, by the progress token it sent. */
  readonly progress: Map<string, NonNullable<McpCallOptions['onProgress']>>;
}

/**
 * Opens nothing yet: the first `tools()` or `call()` connects (the SDK is imported then), and a
 * call after the connection closed (a stdio server that exited) connects again, starting a new
 * server process. A failure to connect is `MCP_SERVER_UNAVAILABLE` naming the server, with what
 * it wrote on stderr last.
 *
 * @example
 * ```ts
 * const server = openMcpConnection({ name: 'fs', config: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] }, baseDir: '.', maxMessageBytes: 1 << 20 });
 * const tools = await server.tools();
 * await server.close();
 * ```
 */
export function openMcpConnection(settings: McpServerSettings): McpConnection {
  let live: Promise<Live> | undefined;
  let closing = false;
  /** Numbers the progress tokens of this connection's calls. */
  let calls = 0;
  const connected = async (): Promise<Live> => {
    if (closing) throw unavailable(settings, 'the connection was closed');
    const current = live && (await live.catch(() => undefined));
    if (current && !current.closed) return current;
    live = connect(settings);
    // A failed connection is not kept: the next use tries again.
    live.catch(() => (live = undefined));
    return live;
  };
  return {
    async tools() {
      const current = await connected();
      current.tools ??= listTools(current, settings);
      return current.tools;
    },
    async call(tool, args, options) {
      const current = await connected();
      try {
        const { onProgress } = options;
        const progressToken = onProgress && `redflow-${(calls += 1)}`;
        if (progressToken !== undefined && onProgress) current.progress.set(progressToken, onProgress);
        try {
          const meta = { 'redflow/idempotencyKey': options.idempotencyKey, ...(progressToken !== undefined && { progressToken }) };
          const result = await current.client.callTool({ name: tool, arguments: args, _meta: meta }, undefined, { signal: options.signal, timeout: options.timeoutMs });
          return result as McpCallResult;
        } finally {
          // A notification reaches its handler a tick after it is read, a result at once: the last
          // report, sent just before the result, is still on its way; a turn of the loop lets it in.
          if (progressToken !== undefined) await new Promise((resolve) => setImmediate(resolve)).then(() => current.progress.delete(progressToken));
        }
      } catch (error) {
        throw callError(error, tool, settings, current, options);
      }
    },
    async close() {
      closing = true;
      const current = live && (await live.catch(() => undefined));
      live = undefined;
      await current?.client.close().catch(() => undefined);
    },
  };
}

async function connect(settings: McpServerSettings): Promise<Live> {
  const [{ Client }, { ProgressNotificationSchema }] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/types.js')]);
  const timeoutMs = settings.config.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS;
  const stderr: string[] = [];
  const transport = await makeTransport(settings, stderr);
  const live: Live = {
    client: new Client(
      { name: 'redflow', version: '1' },
      // The SDK lists the tools again when the server says they changed; the next run sees them.
      { listChanged: { tools: { onChanged: (error, tools) => (live.tools = error || !tools ? undefined : Promise.resolve(tools.map(listed))) } } },
    ),
    tools: undefined,
    closed: false,
    lastError: undefined,
    progress: new Map(),
  };
  // Our own tokens, not the SDK's `onprogress`: the SDK forgets a call's token as its result comes,
  // which drops a last report that arrived with it. A report for no call in flight is ignored.
  live.client.setNotificationHandler(ProgressNotificationSchema, ({ params }) => {
    const { progressToken, progress, total, message } = params;
    live.progress.get(String(progressToken))?.({ progress, ...(total !== undefined && { total }), ...(message !== undefined && { message }) });
  });
  live.client.onclose = () => (live.closed = true);
  live.client.onerror = (error) => (live.lastError = error);
  try {
    await live.client.connect(transport, { timeout: timeoutMs });
  } catch (error) {
    await live.client.close().catch(() => undefined);
    throw unavailable(settings, `${messageOf(error)}${stderrTail(stderr)}`, error);
  }
  return live;
}

async function makeTransport(settings: McpServerSettings, stderr: string[]) {
  const { config } = settings;
  const env = settings.env ?? process.env;
  if (config.url !== undefined) {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const headers: Record<string, string> = { ...config.headers };
    for (const [header, variable] of Object.entries(config.headersFromEnv ?? {})) headers[header] = secretFromEnv(settings, variable, env, `header ${header}`);
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } });
  }
  const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const serverEnv: Record<string, string> = { ...getDefaultEnvironment() };
  for (const [key, value] of Object.entries(config.env ?? {})) {
    serverEnv[key] = value.startsWith('$') ? secretFromEnv(settings, value.slice(1), env, `env ${key}`) : value;
  }
  const transport = new StdioClientTransport({
    command: config.command ?? '',
    args: config.args ?? [],
    env: serverEnv,
    cwd: path.resolve(settings.baseDir, config.cwd ?? '.'),
    stderr: 'pipe',
    maxBufferSize: settings.maxMessageBytes,
  });
  // Kept for the error of a server that does not start: its last words say why.
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString('utf8'));
    if (stderr.length > 20) stderr.shift();
  });
  return transport;
}

/** A header or environment value the flow names by variable: read now, and redacted from then on. */
function secretFromEnv(settings: McpServerSettings, variable: string, env: NodeJS.ProcessEnv, what: string): string {
  const value = env[variable];
  if (value === undefined || value === '') {
    throw new RedflowError(
      errorInfo(ErrorCode.MCP_SERVER_UNAVAILABLE, `MCP server '${settings.name}': ${what} takes the environment variable ${variable}, which is not set`, {
        hint: `set ${variable} in the environment of the process that runs the flow`,
      }),
    );
  }
  registerSecret(value);
  return value;
}

async function listTools(live: Live, settings: McpServerSettings): Promise<readonly McpListedTool[]> {
  const timeout = settings.config.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS;
  const tools: McpListedTool[] = [];
  let cursor: string | undefined;
  try {
    do {
      const page = await live.client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
      tools.push(...page.tools.map(listed));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  } catch (error) {
    live.tools = undefined;
    throw unavailable(settings, `it did not list its tools: ${messageOf(error)}`, error);
  }
  return tools;
}

function listed(tool: { name: string; title?: string; description?: string; inputSchema: object }): McpListedTool {
  return {
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    ...(tool.description !== undefined && { description: tool.description }),
    inputSchema: tool.inputSchema as Record<string, unknown>,
  };
}

/** MCP JSON-RPC error codes the SDK raises itself (`ErrorCode` of the SDK's types). */
const REQUEST_TIMEOUT = -32001;

/** A failed call as the model sees it: a timeout, an abort, a server gone, a message too large, or the server's own error. */
function callError(error: unknown, tool: string, settings: McpServerSettings, live: Live, options: McpCallOptions): RedflowError {
  const where = `tool '${tool}' of MCP server '${settings.name}'`;
  if (options.signal.aborted) {
    return new RedflowError(errorInfo(ErrorCode.RUN_ABORTED, `${where} was cancelled: the run was aborted`), { cause: error });
  }
  if ((error as { code?: unknown }).code === REQUEST_TIMEOUT) {
    return new RedflowError(
      errorInfo(ErrorCode.TOOL_TIMEOUT, `${where} did not answer within ${options.timeoutMs} ms (the call was cancelled on the server)`, {
        hint: 'raise the node\'s "timeoutMs", or ask the tool for less',
        retryable: true,
      }),
      { cause: error },
    );
  }
  if (live.lastError?.message.includes('ReadBuffer exceeded')) {
    return new RedflowError(
      errorInfo(ErrorCode.TOOL_RESPONSE_TOO_LARGE, `${where} answered with more than ${settings.maxMessageBytes} bytes; the connection was closed`, {
        hint: 'ask the tool for less (a page, a summary), or raise the node\'s "maxResultBytes"',
      }),
      { cause: error },
    );
  }
  if (live.closed) {
    return new RedflowError(
      errorInfo(ErrorCode.TOOL_FAILED, `${where} failed: the server closed the connection during the call (${messageOf(error)})`, {
        hint: 'the server is started again at the next call; see its own logs for why it stopped',
        retryable: true,
      }),
      { cause: error },
    );
  }
  return new RedflowError(errorInfo(ErrorCode.TOOL_FAILED, `${where} failed: ${messageOf(error)}`, { hint: 'check the input against the tool\'s input schema and the server\'s logs' }), {
    cause: error,
  });
}

function unavailable(settings: McpServerSettings, why: string, cause?: unknown): RedflowError {
  const where = settings.config.url !== undefined ? `at ${settings.config.url}` : `(command ${JSON.stringify(settings.config.command)})`;
  return new RedflowError(
    errorInfo(ErrorCode.MCP_SERVER_UNAVAILABLE, `MCP server '${settings.name}' ${where} is not available: ${why}`, {
      hint:
        settings.config.url !== undefined
          ? 'start the server, check the url (Streamable HTTP, usually ending in /mcp) and its headers'
          : 'check that the command exists on PATH and starts an MCP server on stdio (try it by hand); raise "connectTimeoutMs" for a slow start',
      retryable: true,
    }),
    cause === undefined ? undefined : { cause },
  );
}

function stderrTail(stderr: readonly string[]): string {
  const text = stderr.join('').trim();
  return text === '' ? '' : `; it wrote: ${text.slice(-500)}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
