import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { ApiError, ErrorCode, errorInfo, RedflowError } from '../errors.js';
import { redactSecrets, registerSecret } from '../secrets/secrets.js';
import { withSecretScope } from '../secrets/secretScope.js';
import { apiRoutes } from './apiRoutes.js';
import { assertLocalHostHeader, assertTokenForHost, authorize } from './auth.js';
import { DEFAULT_EDITOR_DIR, createEditorFiles } from './editorFiles.js';
import { createEmbeddedRunBackend } from './embeddedRunBackend.js';
import { createFlowStore, type FileFlowStore, type FlowStore } from './flowStore.js';
import { DEFAULT_MAX_BODY_BYTES } from './requestBody.js';
import { sendError } from './respond.js';
import { createRouter } from './router.js';
import type { InspectorFactory, RunBackend } from './runBackend.js';
import type { A2aEndpoint } from './a2a/a2aEndpoint.js';
import type { StepService } from '../stepService/reactStepService.js';
import { redflowVersion as version } from '../version.js';

/** The port `redflow serve` listens on unless told otherwise. */
export const DEFAULT_PORT = 4800;
/** The address `redflow serve` binds to unless told otherwise: this machine only. */
export const DEFAULT_HOST = '127.0.0.1';
/** The flows directory unless told otherwise (relative to the working directory). */
export const DEFAULT_FLOWS_DIR = 'flows';

/** Options of {@link createRedflowServer}. */
export interface RedflowServerOptions {
  /** The flows directory (default `./flows`; created on the first save). Ignored with `flows`. */
  readonly flowsDir?: string;
  /** Flows stored elsewhere than a directory (a Node-RED's tabs); needs `backend`, which runs them. */
  readonly flows?: FlowStore;
  /** Where the embedded backend keeps run logs (default `.redflow/runs`, as the CLI). Ignored with `backend`. */
  readonly runsDir?: string;
  /** Default {@link DEFAULT_HOST}. A non-loopback address needs a `token`. */
  readonly host?: string;
  /** Default {@link DEFAULT_PORT}; `0` picks a free port (the answer's `port` and `url` say which). */
  readonly port?: number;
  /** When set, every `/api` request must carry it as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** The editor's static build (default: the package's `dist/editor`). */
  readonly editorDir?: string;
  /**
   * Where runs run (default: embedded, in this process). The server owns it: `close()` closes it.
   */
  readonly backend?: RunBackend;
  /** Gives each embedded run's statechart an inspection observer (the Stately inspector). */
  readonly inspector?: InspectorFactory;
  /** The environment embedded runs' models and tools see; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Folders besides the flows directory where the files a flow names (tool modules, answers files,
   * memory stores) may be. Anything else is refused (`FLOW_FILE_OUTSIDE_ROOTS`) when a flow is
   * saved, validated or run. With `backend`, runs are checked where they run (the workers' own).
   */
  readonly allowFiles?: readonly string[];
  /**
   * Let the API save flows whose `tool.mcp` nodes start a program (`command`): off by default, since
   * whoever may save flows could then run any program as this server (`MCP_COMMAND_NOT_ALLOWED`).
   */
  readonly allowMcpCommands?: boolean;
  /** Largest body of a route that takes no flow (default 1 MiB; flows may be 5 MiB). */
  readonly maxBodyBytes?: number;
  /** The step service of `POST /api/agent/react_step` (`redflow serve --models`); without one the route answers 404. */
  readonly steps?: StepService;
  /** How often an idle SSE stream gets a keepalive comment (default 15 s). */
  readonly keepAliveMs?: number;
  /** One line per answered request (method, path without its query, status, time); default none. */
  readonly logRequest?: (line: string) => void;
  /**
   * Where the server's own failures are reported with their stack (they never reach clients), and
   * refused requests whose answer withheld a path or address, on one line; default stderr.
   */
  readonly logError?: (line: string) => void;
  /**
   * Serves `/mcp` (`redflow serve --mcp`) with the endpoint this makes from the server's flows and
   * run backend, behind the same token as the API; without it, `/mcp` is not served.
   */
  readonly mcp?: (ports: { readonly flows: FlowStore; readonly backend: RunBackend }) => McpEndpoint;
  /** Serves every flow as an A2A agent under `/a2a/<flowId>` (`redflow serve --a2a`; docs/a2a.md). */
  readonly a2a?: boolean;
}

/** An HTTP endpoint of another protocol on the server's port (the MCP server at `/mcp`). */
export interface McpEndpoint {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Ends its sessions; the server calls it before it closes its backend. */
  close(): Promise<void>;
}

/** Where {@link RedflowServerOptions.mcp}'s endpoint is served. */
export const MCP_PATH = '/mcp';

/** A running `redflow serve`. */
export interface RedflowServer {
  /** The editor's address, e.g. `http://127.0.0.1:4800/` (with the real port when `port` was 0). */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  readonly backend: RunBackend;
  /**
   * Stops taking requests, ends open streams and closes the backend: an embedded backend aborts
   * its runs under way (their logs record the abort); on a cluster they go on. Safe to call twice.
   */
  close(): Promise<void>;
}

/**
 * Starts the HTTP server of `redflow serve`: the editor's files and the HTTP API (apiTypes.ts)
 * on one port. Resolves once it listens.
 *
 * @throws RedflowError SERVE_TOKEN_REQUIRED for a non-loopback host without a token.
 *
 * @example
 * ```ts
 * import { createRedflowServer } from 'redflow/server';
 * const server = await createRedflowServer({ flowsDir: 'flows', port: 0 });
 * console.log(`editor at ${server.url}`);
 * // …
 * await server.close();
 * ```
 */
export async function createRedflowServer(options: RedflowServerOptions = {}): Promise<RedflowServer> {
  const host = options.host ?? DEFAULT_HOST;
  const token = options.token === undefined || options.token === '' ? undefined : options.token;
  assertTokenForHost(host, token);
  // A token in a run's data or an error (a request echoing ?token=) is redacted like any secret.
  registerSecret(token);
  if (options.flows !== undefined && options.backend === undefined) {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, 'a server on flows stored elsewhere needs the backend that runs them'));
  }
  const files = options.flows === undefined ? createFlowStore(options.flowsDir ?? DEFAULT_FLOWS_DIR, options.allowFiles, { allowMcpCommands: options.allowMcpCommands === true }) : undefined;
  const flows: FlowStore = options.flows ?? (files as FileFlowStore);
  const logError = options.logError ?? ((line: string) => process.stderr.write(`${redactSecrets(line)}\n`));
  const backend =
    options.backend ??
    createEmbeddedRunBackend({
      flowsDir: (files as FileFlowStore).dir,
      ...(options.runsDir !== undefined && { runsDir: options.runsDir }),
      ...(options.inspector !== undefined && { inspector: options.inspector }),
      ...(options.env !== undefined && { env: options.env }),
      allowFiles: [(files as FileFlowStore).dir, ...(options.allowFiles ?? []).map((dir) => path.resolve(dir))],
      onRunError: (traceId, error) => logError(`run ${traceId} failed while ending: ${describe(error)}`),
    });
  const router = createRouter(
    apiRoutes({
      flows,
      backend,
      version,
      inspect: options.inspector !== undefined,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      ...(options.keepAliveMs !== undefined && { keepAliveMs: options.keepAliveMs }),
      ...(options.steps !== undefined && { steps: options.steps }),
      logError: (line: string) => logError(line),
      // A cluster's runs see their workers' environment, not this one: nothing to warn from here.
      ...(options.backend === undefined && { runEnv: options.env ?? process.env }),
    }),
  );
  // The A2A SDK is loaded on the first /a2a request only.
  let a2aEndpoint: Promise<A2aEndpoint> | undefined;
  const a2a = () => (a2aEndpoint ??= import('./a2a/a2aEndpoint.js').then((m) => m.createA2aEndpoint({ flows, backend, maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, ...(token !== undefined && { token }) })));
  const editorFiles = createEditorFiles(options.editorDir ?? DEFAULT_EDITOR_DIR);
  const mcp = options.mcp?.({ flows, backend });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = req.url ?? '/';
    const queryAt = raw.indexOf('?');
    const pathname = queryAt === -1 ? raw : raw.slice(0, queryAt);
    const query = new URLSearchParams(queryAt === -1 ? '' : raw.slice(queryAt + 1));
    // Neither caching proxies nor browsers should keep API answers, sniff types, or send URLs
    // (which may hold ?token=) to other sites as referrers.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (token === undefined) assertLocalHostHeader(req.headers);
    if (!pathname.startsWith('/')) throw new ApiError(errorInfo(ErrorCode.HTTP_NOT_FOUND, 'the request target must be a path'));
    if (pathname === MCP_PATH && mcp !== undefined) {
      // The API's token: an MCP client sends it as Authorization: Bearer, as any API client does.
      if (token !== undefined) authorize(req.headers, query, token, { queryToken: false });
      return mcp.handle(req, res);
    }
    if (options.a2a === true && pathname.startsWith('/a2a/')) return (await a2a())(req, res, pathname, query);
    if (pathname !== '/api' && !pathname.startsWith('/api/')) return editorFiles(req, res, pathname);
    const match = router.match(req.method ?? '', pathname);
    // The token is checked before the route is known, so an unauthorised client learns nothing of the API.
    if (token !== undefined) {
      authorize(req.headers, query, token, { queryToken: match.kind === 'found' && match.route.handler.queryToken });
    }
    if (match.kind === 'not-found') {
      throw new ApiError(errorInfo(ErrorCode.HTTP_NOT_FOUND, `no API route ${req.method ?? ''} ${pathname.slice(0, 200)}`, { hint: 'the API has /api/health, /api/flows[/<id>], /api/validate and /api/runs[/<traceId>[/events|/stream|/abort]]: see docs/editor-and-http-api.md' }));
    }
    if (match.kind === 'method-not-allowed') {
      throw new ApiError(errorInfo(ErrorCode.HTTP_METHOD_NOT_ALLOWED, `${req.method ?? ''} is not allowed on ${pathname.slice(0, 200)}; use ${match.allowed.join(' or ')}`), {
        headers: { Allow: match.allowed.join(', ') },
      });
    }
    await match.route.handler.run({ req, res, params: match.params, query });
  };

  /** Set once `close()` is called. */
  let closing: Promise<void> | undefined;
  const server = createServer((req, res) => {
    const started = process.hrtime.bigint();
    if (options.logRequest) {
      const log = options.logRequest;
      res.once('close', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const path = (req.url ?? '').split('?')[0] ?? '';
        log(`${req.method ?? '?'} ${path} ${res.statusCode}${res.writableFinished ? '' : ' (client gone)'} ${ms.toFixed(1)} ms`);
      });
    }
    // Each request in a secret scope of its own: a secret it brings (a step's key) is redacted from
    // its answer, its error and what is logged for it, never from other requests'.
    withSecretScope(() => handle(req, res).catch((thrown: unknown) => {
      // A request still under way when close() began fails because the server is stopping (its
      // connection cut, the backend's NATS connection drained under it): not a bug to report.
      const stopping = closing !== undefined;
      if (res.headersSent) {
        // Mid-answer (a file or a stream broke off): all that is left is to cut the connection.
        res.destroy();
        if (!isClientGone(thrown) && !stopping) logError(`${req.method ?? '?'} ${(req.url ?? '').split('?')[0]}: ${describe(thrown)}`);
        return;
      }
      const answer = sendError(res, thrown);
      if (stopping) return;
      const request = `${req.method ?? '?'} ${(req.url ?? '').split('?')[0]}`;
      // A bug or a failure of the server's own (5xx): the operator has to find it, so the stack too.
      if (answer.unexpected || answer.status >= 500) {
        if (answer.unexpected || answer.withheld) logError(`${request}: ${describe(thrown)}`);
        return;
      }
      // A refusal of the client's request (4xx) is no fault of the server: no stack, which would
      // make it look like a bug. When the answer withheld part of it (a path, an address, which may
      // be the client's own text), this one line is the only place the operator can read it whole.
      if (answer.withheld) logError(`${request}: ${answer.status} ${oneLine(thrown)}`);
    }));
  });

  const port = options.port ?? DEFAULT_PORT;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, host, port));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(host)}:${address.port}/`,
    port: address.port,
    host,
    backend,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        // Aborting the runs ends their streams (each gets its last event and `end`) before the
        // sockets are cut; idle keep-alive connections are closed at once.
        server.closeIdleConnections();
        await mcp?.close();
        await backend.close();
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}

/** The host as written in a URL: a wildcard address becomes this machine's, an IPv6 literal gets brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** A failure to listen as an error the user can act on (another port, another host). */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const why: Readonly<Record<string, string>> = {
    EADDRINUSE: `port ${port} on ${host} is already in use`,
    EACCES: `this process may not listen on port ${port}`,
    EADDRNOTAVAIL: `${host} is not an address of this machine`,
    ENOTFOUND: `the host name ${host} is unknown`,
  };
  const message = error.code === undefined ? undefined : why[error.code];
  if (message === undefined) return error;
  return new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `cannot listen: ${message}`, { hint: 'choose another --port (0 picks a free one) or --host' }), { cause: error });
}

function isClientGone(thrown: unknown): boolean {
  const code = typeof thrown === 'object' && thrown !== null && 'code' in thrown ? (thrown as { code: unknown }).code : undefined;
  return code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || code === 'EPIPE';
}

/** A Redflow error's code and full message on one line: a client's newlines cannot forge log lines. */
function oneLine(thrown: unknown): string {
  const text = thrown instanceof RedflowError ? `${thrown.code}: ${thrown.message}` : String(thrown);
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

function describe(thrown: unknown): string {
  return thrown instanceof Error ? (thrown.stack ?? thrown.message) : String(thrown);
}
