import { ErrorCode, errorInfo, toErrorInfo, type ErrorInfo } from '../errors.js';
import { NO_HEADERS, createLocalPubSub } from '../actors/localPubSub.js';
import type {
  HandlerContext,
  Headers,
  Reply,
  RequestHandler,
  RequestOptions,
  ServeOptions,
  Subscription,
  Transport,
  TransportMessage,
} from '../actors/transport.js';
import type { NodeRedMessage, NodeRedNode, SendFunction } from './nodeRedApi.js';

/** What a handler served on the Node-RED transport gets: the message that carried the request, and its node's outputs. */
export interface NodeRedHandlerContext extends HandlerContext {
  /** The message the node received: `payload` is the request, `redflow.request` its id. */
  readonly msg: NodeRedMessage;
  /** Sends on the receiving node's outputs: a flow tool sends the request into its body. */
  readonly send: SendFunction;
}

/** A transport whose requests travel as Node-RED messages to the nodes that serve them. */
export interface NodeRedTransport extends Transport {
  /**
   * Requests on `subject` are delivered as a message to the input of node `nodeId`, which hands
   * it back with {@link acceptRequest}; the handler served on `subject` then answers it there.
   */
  route(subject: string, nodeId: string): void;
}

/** The request a message carries, as `msg.redflow`. */
export interface RequestMarker {
  /** Id of the delivery: what {@link acceptRequest} and a flow tool's end find it by. */
  readonly request: string;
  readonly subject: string;
  readonly headers: Headers;
}

/** Options of {@link createNodeRedTransport}. */
export interface NodeRedTransportOptions {
  /** The running node of an id (`RED.nodes.getNode`): looked up at each request, since nodes restart. */
  readonly getNode: (id: string) => NodeRedNode | null;
  /** A new message id (`RED.util.generateId`). */
  readonly newId: () => string;
}

/** A request on its way to a node, until the node has answered it. */
interface Delivery {
  readonly subject: string;
  readonly data: unknown;
  readonly headers: Headers;
  readonly signal: AbortSignal;
  readonly handler: RequestHandler<unknown, unknown>;
  readonly settle: (reply: Reply<unknown>) => void;
}

const neverAborted: AbortSignal = new AbortController().signal;

/**
 * Deliveries waiting for their node, across every agent of this Node-RED: a message carries only
 * its delivery's id, and any node may be asked to hand it back.
 */
const deliveries = new Map<string, Delivery>();

/**
 * The Node-RED transport: an agent reaches its model, tools and memory through messages to their
 * nodes' inputs, with the semantics of the other transports (a reply is data, never a throw; no
 * responder, a timeout, an abort and a closed transport each have their code). A request on a
 * routed subject becomes the message `{ topic: subject, payload: data, redflow: { request,
 * subject, headers } }` delivered with `node.receive`, so Node-RED's hooks, Catch and Complete
 * nodes and the node's status see it; the node hands it back with {@link acceptRequest}, and the
 * subject's handler answers it in the node's context (with the message and the node's `send`).
 *
 * @example
 * ```ts
 * const transport = createNodeRedTransport({ getNode: (id) => RED.nodes.getNode(id), newId: RED.util.generateId });
 * transport.route('redflow.tool.lookup', toolNodeId);
 * serveTool(transport, 'redflow.tool.lookup', lookupTool);
 * ```
 */
export function createNodeRedTransport(options: NodeRedTransportOptions): NodeRedTransport {
  const routes = new Map<string, string>();
  const handlers = new Map<string, RequestHandler<unknown, unknown>>();
  const pubsub = createLocalPubSub();
  const open = new Set<(reply: Reply<unknown>) => void>();
  let closed = false;

  return {
    route(subject: string, nodeId: string): void {
      routes.set(subject, nodeId);
    },

    request<Req, Res>(subject: string, data: Req, request: RequestOptions): Promise<Reply<Res>> {
      if (closed) return Promise.resolve(failure(ErrorCode.TRANSPORT_CLOSED, 'the transport is closed'));
      const handler = handlers.get(subject);
      const nodeId = routes.get(subject);
      const node = nodeId === undefined ? null : options.getNode(nodeId);
      if (handler === undefined || node === null) {
        return Promise.resolve(
          failure(ErrorCode.TRANSPORT_NO_RESPONDER, `nothing answers on ${subject}`, 'deploy the node wired to the agent for it', true),
        );
      }
      const signal = request.signal ?? neverAborted;
      if (signal.aborted) return Promise.resolve(failure(ErrorCode.RUN_ABORTED, 'the request was aborted'));
      const id = options.newId();
      return new Promise<Reply<Res>>((resolve) => {
        const settle = (reply: Reply<unknown>): void => {
          if (!deliveries.delete(id)) return;
          open.delete(settle);
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(reply as Reply<Res>);
        };
        const onAbort = (): void => settle(failure(ErrorCode.RUN_ABORTED, 'the request was aborted'));
        // A handler that outlives its timeout is not cancelled (only the requester's signal does that); its late reply is dropped.
        const timer = setTimeout(
          () => settle(failure(ErrorCode.TRANSPORT_TIMEOUT, `no reply on ${subject} within ${request.timeoutMs} ms`, undefined, true)),
          request.timeoutMs,
        );
        signal.addEventListener('abort', onAbort, { once: true });
        open.add(settle);
        const headers = request.headers ?? NO_HEADERS;
        deliveries.set(id, { subject, data, headers, signal, handler, settle });
        const marker: RequestMarker = { request: id, subject, headers };
        try {
          node.receive({ _msgid: options.newId(), topic: subject, payload: data, redflow: marker });
        } catch (error) {
          settle({ ok: false, error: toErrorInfo(error, ErrorCode.TRANSPORT_BAD_MESSAGE) });
        }
      });
    },

    serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, _options?: ServeOptions): Subscription {
      const member = handler as RequestHandler<unknown, unknown>;
      handlers.set(subject, member);
      return {
        unsubscribe() {
          if (handlers.get(subject) === member) handlers.delete(subject);
        },
      };
    },

    publish(subject: string, data: unknown, headers?: Headers): void {
      if (closed) return;
      pubsub.publish(subject, data, headers);
    },

    subscribe(pattern: string, handler: (message: TransportMessage) => void): Subscription {
      return pubsub.subscribe(pattern, handler);
    },

    async close(): Promise<void> {
      closed = true;
      for (const settle of [...open]) settle(failure(ErrorCode.TRANSPORT_CLOSED, 'the transport closed before the reply'));
      handlers.clear();
      routes.clear();
      pubsub.clear();
    },
  };
}

/**
 * Answers a request that reached a node's input: runs the handler served on its subject with the
 * message and the node's `send`, and settles the request with the result. Resolves with the
 * reply, for the node's status; `undefined` when the message carries no request waiting for an
 * answer (it came from elsewhere, or its requester gave up).
 *
 * @example
 * ```ts
 * node.on('input', (msg, send, done) => {
 *   const answering = acceptRequest(msg, send);
 *   if (answering === undefined) return done(new Error('this node takes requests from an agent only'));
 *   void answering.then(() => done());
 * });
 * ```
 */
export function acceptRequest(msg: NodeRedMessage, send: SendFunction): Promise<Reply<unknown>> | undefined {
  const marker = requestMarker(msg);
  const delivery = marker === undefined ? undefined : deliveries.get(marker.request);
  if (delivery === undefined) return undefined;
  const context: NodeRedHandlerContext = { subject: delivery.subject, headers: delivery.headers, signal: delivery.signal, msg, send };
  return (async (): Promise<Reply<unknown>> => {
    let reply: Reply<unknown>;
    try {
      reply = { ok: true, data: await delivery.handler(delivery.data, context) };
    } catch (error) {
      reply = { ok: false, error: toErrorInfo(error, ErrorCode.TRANSPORT_BAD_MESSAGE) };
    }
    delivery.settle(reply);
    return reply;
  })();
}

/** The request marker a message carries, if it carries one. */
export function requestMarker(msg: NodeRedMessage): RequestMarker | undefined {
  const marker = msg.redflow;
  if (typeof marker !== 'object' || marker === null) return undefined;
  const { request, subject } = marker as Record<string, unknown>;
  return typeof request === 'string' && typeof subject === 'string' ? (marker as RequestMarker) : undefined;
}

/**
 * The error a reply reports, for Node-RED's `done(error)`: a failed request, or a tool's failure
 * (which the agent takes as an observation, but which Catch nodes should hear of).
 */
export function replyError(reply: Reply<unknown>): ErrorInfo | undefined {
  if (!reply.ok) return reply.error;
  const data = reply.data as { ok?: unknown; error?: unknown } | null;
  if (typeof data === 'object' && data !== null && data.ok === false && typeof data.error === 'object' && data.error !== null) {
    return data.error as ErrorInfo;
  }
  return undefined;
}

function failure(code: ErrorCode, message: string, hint?: string, retryable?: boolean): Reply<never> {
  return { ok: false, error: errorInfo(code, message, { hint, retryable }) };
}
