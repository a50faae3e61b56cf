import type { ErrorInfo } from '../errors.js';

/**
 * A reply over a transport: the handler's result, or its error as data. Requests never throw for
 * a remote failure, so the hot path of the loop stays free of exceptions.
 */
export type Reply<T> = { readonly ok: true; readonly data: T } | { readonly ok: false; readonly error: ErrorInfo };

/** Message headers (NATS headers, Node-RED msg properties). Names are defined in {@link Header}. */
export type Headers = Readonly<Record<string, string>>;

/** Options of one request. */
export interface RequestOptions {
  /** Give up after this long with `TRANSPORT_TIMEOUT`. */
  readonly timeoutMs: number;
  /**
   * Abandons the request (its reply is ignored) with `RUN_ABORTED`, and cancels the call: the
   * handler's `context.signal` aborts (over NATS, when the service is served `cancellable`).
   */
  readonly signal?: AbortSignal;
  readonly headers?: Headers;
}

/** What a request handler is given besides the payload. */
export interface HandlerContext {
  readonly subject: string;
  readonly headers: Headers;
  /** Aborted when the requester gives up or the transport closes. */
  readonly signal: AbortSignal;
}

/** Answers requests on one subject. A thrown error becomes `{ ok: false, error }` for the requester. */
export type RequestHandler<Req = unknown, Res = unknown> = (data: Req, context: HandlerContext) => Promise<Res> | Res;

/** A published message, as a subscriber sees it. */
export interface TransportMessage<T = unknown> {
  readonly subject: string;
  readonly data: T;
  readonly headers: Headers;
}

/** Stops a subscription or a service. Idempotent. */
export interface Subscription {
  unsubscribe(): void;
}

/** Options of {@link Transport.serve}. */
export interface ServeOptions {
  /** Members of one queue group share the requests (NATS queue groups); default: the subject. */
  readonly queue?: string;
  /**
   * Also hear cancels, so a requester that gives up aborts the handler's signal. Over NATS each
   * member then subscribes to `Subject.cancel(subject)` as well (which its user must be allowed);
   * in one process the handler gets the requester's own signal anyway.
   */
  readonly cancellable?: boolean;
}

/**
 * How the core reaches its actors: request/reply and publish/subscribe by subject, NATS-style
 * (tokens separated by `.`, `*` matches one token, `>` the rest). Payloads are JSON values; the
 * in-process transport passes them by reference, so neither side may mutate what it sent or got.
 *
 * Implementations: in-process (embedded), NATS (distributed), Node-RED wires.
 *
 * @example
 * ```ts
 * const transport: Transport = createInProcessTransport();
 * transport.serve('demo.echo', (data) => data);
 * const reply = await transport.request('demo.echo', { hi: 1 }, { timeoutMs: 1000 });
 * ```
 */
export interface Transport {
  request<Req, Res>(subject: string, data: Req, options: RequestOptions): Promise<Reply<Res>>;
  serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, options?: ServeOptions): Subscription;
  publish(subject: string, data: unknown, headers?: Headers): void;
  subscribe(pattern: string, handler: (message: TransportMessage) => void): Subscription;
  /** Stops every service and subscription; pending requests end with `TRANSPORT_CLOSED`. */
  close(): Promise<void>;
}

/** Header names, defined once. */
export const Header = {
  IdempotencyKey: 'Redflow-Idempotency-Key',
  TraceId: 'Redflow-Trace-Id',
  /** On an event published live on its trace subject: the event's `seq` in its run. */
  Seq: 'Redflow-Seq',
  /**
   * On a cancel (`Subject.cancel(subject)`): the reply subject of the request to stop. A cancel
   * that also carries `Redflow-Idempotency-Key` stops every request of that key (each attempt).
   */
  Cancel: 'Redflow-Cancel',
} as const;
