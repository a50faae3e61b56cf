/**
 * `redflow serve --a2a`: every flow of the server is an A2A agent, served with the A2A SDK's own
 * request handler and JSON-RPC transport over the server's node:http. Loaded on the first `/a2a`
 * request only (the SDK stays out of `import 'redflow'` and of servers without `--a2a`).
 *
 * - `GET /a2a/<flowId>/.well-known/agent-card.json`: the flow's agent card, public (A2A clients
 *   read a card before they authenticate; it names the bearer scheme the calls need).
 * - `POST /a2a/<flowId>`: JSON-RPC (SendMessage, SendStreamingMessage, GetTask, CancelTask,
 *   SubscribeToTask), behind the API's token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AGENT_CARD_PATH, A2A_VERSION_HEADER, formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  validateVersion,
  type ServerCallContext,
  type TaskStore,
  type User,
} from '@a2a-js/sdk/server';
import { ApiError, ErrorCode, errorInfo } from '../../errors.js';
import { isValidTraceId } from '../../runtime/ids.js';
import { authorize } from '../auth.js';
import { parseFlowId } from '../flowIds.js';
import type { FlowStore } from '../flowStore.js';
import { readJsonBody } from '../requestBody.js';
import { sendJson } from '../respond.js';
import type { RunBackend } from '../runBackend.js';
import { A2A_PATH, agentCardOf } from './agentCard.js';
import { createRunExecutor } from './runExecutor.js';
import { taskOfLog } from './taskMapping.js';

/** What the A2A endpoint serves from. */
export interface A2aEndpointOptions {
  readonly flows: FlowStore;
  readonly backend: RunBackend;
  /** The API's bearer token: JSON-RPC calls need it. */
  readonly token?: string;
  readonly maxBodyBytes: number;
}

/** Answers one request under `/a2a/`. */
export type A2aEndpoint = (req: IncomingMessage, res: ServerResponse, pathname: string, query: URLSearchParams) => Promise<void>;

/** The caller of a server with a token: one user, so every task is visible to every call that has the token. */
const TOKEN_USER: User = {
  get isAuthenticated() {
    return true;
  },
  get userName() {
    return 'bearer';
  },
};

const CARD_SUFFIX = `/${AGENT_CARD_PATH}`;

/**
 * Makes the `/a2a/` endpoint of `redflow serve`: one A2A agent per flow.
 *
 * @example
 * ```ts
 * const a2a = createA2aEndpoint({ flows, backend, token, maxBodyBytes: 1 << 20 });
 * await a2a(req, res, '/a2a/support', new URLSearchParams());
 * ```
 */
export function createA2aEndpoint(options: A2aEndpointOptions): A2aEndpoint {
  const { flows, backend, token } = options;
  const agents = new Map<string, { readonly rpc: JsonRpcTransportHandler; readonly handler: DefaultRequestHandler }>();

  const agentOf = async (flowId: string, baseUrl: string) => {
    const { flow } = await flows.runnable(flowId);
    const card = agentCardOf({ flowId, flow: flow.definition, url: `${baseUrl}${A2A_PATH}/${flowId}`, bearer: token !== undefined });
    let agent = agents.get(flowId);
    if (agent === undefined) {
      const handler = new DefaultRequestHandler(card, logBackedTaskStore(new InMemoryTaskStore(), backend, flowId), createRunExecutor({ flowId, flows, backend }));
      agent = { rpc: new JsonRpcTransportHandler(handler), handler };
      agents.set(flowId, agent);
    }
    return { card, ...agent };
  };

  return async (req, res, pathname, query) => {
    const rest = pathname.slice(A2A_PATH.length + 1);
    const isCard = rest.endsWith(CARD_SUFFIX);
    const flowId = parseFlowId(decodePath(isCard ? rest.slice(0, -CARD_SUFFIX.length) : rest));
    if (!isCard && token !== undefined) authorize(req.headers, query, token, { queryToken: false });
    const baseUrl = `http://${req.headers.host ?? '127.0.0.1'}`;
    if (isCard) {
      if (req.method !== 'GET') throw methodNotAllowed('GET', pathname);
      const { card } = await agentOf(flowId, baseUrl);
      return sendJson(res, 200, card);
    }
    if (req.method !== 'POST') throw methodNotAllowed('POST', pathname);
    const { card, rpc } = await agentOf(flowId, baseUrl);
    const body = await readJsonBody(req, { maxBytes: options.maxBodyBytes });
    const requestedVersion = headerOf(req, A2A_VERSION_HEADER);
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: token === undefined ? new UnauthenticatedUser() : TOKEN_USER,
      headers: req.headers,
      ...(requestedVersion !== undefined && { requestedVersion }),
    });
    const id = typeof body === 'object' && body !== null && 'id' in body ? (body as { id: unknown }).id : null;
    try {
      validateVersion(context.requestedVersion, card, 'JSONRPC');
    } catch (thrown) {
      return sendJson(res, 200, { jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(thrown) });
    }
    const answer = await rpc.handle(body as Record<string, unknown>, context);
    if (!(Symbol.asyncIterator in answer)) return sendJson(res, 200, answer);
    await streamAnswer(res, answer, id);
  };
}

/** Writes a streaming method's JSON-RPC answers as Server-Sent Events, the SDK's framing. */
async function streamAnswer(res: ServerResponse, stream: AsyncGenerator<unknown, void, undefined>, id: unknown): Promise<void> {
  const iterator = stream[Symbol.asyncIterator]();
  let first: IteratorResult<unknown, void>;
  try {
    first = await iterator.next();
  } catch (thrown) {
    // Refused before it began (an unknown task, a finished one): a plain JSON-RPC error.
    return sendJson(res, 200, { jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(thrown) });
  }
  res.writeHead(200, SSE_HEADERS);
  // A client gone stops the stream: the run goes on, and the task can be subscribed to again.
  res.once('close', () => void iterator.return?.(undefined));
  try {
    for (let step = first; !step.done; step = await iterator.next()) res.write(formatSSEEvent(step.value));
  } catch (thrown) {
    if (!res.writableEnded) res.write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(thrown) }));
  } finally {
    if (!res.writableEnded) res.end();
  }
}

/**
 * The SDK's in-memory task store, backed by the runs' logs: a task it has not seen (the server
 * restarted, the run was started elsewhere) is read back from its run's log, when that run is one
 * of this flow's.
 */
function logBackedTaskStore(memory: InMemoryTaskStore, backend: RunBackend, flowId: string): TaskStore {
  return {
    save: (task, context) => memory.save(task, context),
    list: (params, context) => memory.list(params, context),
    async load(taskId: string, context: ServerCallContext) {
      const kept = await memory.load(taskId, context);
      if (kept !== undefined || !isValidTraceId(taskId)) return kept;
      const run = await backend.get(taskId);
      if (run === undefined || run.flow !== flowId) return undefined;
      const task = taskOfLog((await backend.events(taskId, 0)) ?? [], taskId);
      await memory.save(task, context);
      return task;
    },
  };
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function decodePath(path: string): string {
  try {
    return path.split('/').map(decodeURIComponent).join('/');
  } catch {
    return path;
  }
}

function methodNotAllowed(allowed: string, pathname: string): ApiError {
  return new ApiError(errorInfo(ErrorCode.HTTP_METHOD_NOT_ALLOWED, `only ${allowed} is allowed on ${pathname.slice(0, 200)}`), { headers: { Allow: allowed } });
}
