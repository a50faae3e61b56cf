import { Empty, headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { ErrorCode, RedflowError, errorInfo, toErrorInfo } from '../errors.js';
import { redactSecrets } from '../secrets/secrets.js';
import {
  Header,
  type Headers,
  type Reply,
  type RequestHandler,
  type RequestOptions,
  type ServeOptions,
  type Subscription,
  type Transport,
  type TransportMessage,
} from '../actors/transport.js';
import { Subject } from '../actors/subjects.js';
import { jsonCodec, type PayloadCodec } from './codec.js';
import { createRequestMux } from './requestMux.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, NatsHeader, cancelledReason, closedReason, createPayloads, failure, isThenable, messageOf, readHeaders, settledWithin, subscribeOrThrow, toNatsHeaders } from './natsWire.js';
import { forgetOnAbort, onAbort } from './abortCallbacks.js';

export { DEFAULT_MAX_PAYLOAD_BYTES, NatsHeader } from './natsWire.js';

/** How long `close()` waits by default for aborted handlers to send their last replies. */
const DEFAULT_CLOSE_GRACE_MS = 1000;

/** Where the transport reports messages it had to drop or refuse: one line each. */
export type NatsTransportLog = (line: string) => void;

/** What `serve` listens through: a stoppable source of requests. */
export interface NatsListening {
  /** Stops taking requests; resolves once those taken have been handed on. */
  drain(): Promise<void>;
}

/**
 * Where `serve` listens for requests instead of a plain queue subscription: the endpoints of a
 * NATS micro service (`startMicroService`), for discovery and stats.
 */
export interface NatsServeListener {
  /** Listens on `subject` in queue group `queue`, handing each request to `callback` as a subscription's callback would. */
  listen(subject: string, queue: string, callback: (error: Error | null, msg: Msg) => void): NatsListening;
}

/** Options of {@link createNatsTransport}. */
export interface NatsTransportOptions {
  /** Payload encoding. Default {@link jsonCodec} (JSON, UTF-8). */
  readonly codec?: PayloadCodec;
  /**
   * Largest payload, in bytes, that is decoded or sent; anything bigger is refused with
   * `TRANSPORT_BAD_MESSAGE` before it is parsed. Default 1 MiB, and never more than the server's
   * `max_payload`.
   */
  readonly maxPayloadBytes?: number;
  /** Receives a line for each dropped or refused message. Default: standard error. */
  readonly log?: NatsTransportLog;
  /**
   * Hand the connection over: `close()` then drains and closes it too. Default `false`: the
   * connection belongs to the caller, and `close()` only drains what this transport subscribed.
   */
  readonly ownsConnection?: boolean;
  /** On `close()`, how long to wait for aborted handlers to send their replies. Default 1000 ms. */
  readonly closeGraceMs?: number;
  /**
   * Where `serve` listens: by default a plain subscription in the queue group; a NATS micro
   * service (`startMicroService`) makes each `serve` one of its endpoints, on the same subject and
   * queue group, discoverable with `$SRV.PING/INFO/STATS`. Cancels are heard plainly either way.
   */
  readonly listener?: NatsServeListener;
}

const defaultLog: NatsTransportLog = (line) => void process.stderr.write(`${redactSecrets(line)}\n`);

/**
 * The distributed transport: request/reply and publish/subscribe over a NATS connection, with
 * the in-process transport's semantics.
 *
 * **Wire format.** Payloads are JSON in UTF-8 (or `options.codec`); {@link Headers} are NATS
 * headers. A successful reply's body is the handler's result itself, so any NATS client in any
 * language can serve an actor by replying JSON. A failed one has the `Redflow-Error` header
 * ({@link NatsHeader}) set to the error code and the body `{ ok: false, error }`.
 *
 * **Requests never throw.** Every outcome is a {@link Reply}: no responder is
 * `TRANSPORT_NO_RESPONDER` at once (retryable: a worker may be starting), no reply in `timeoutMs` is `TRANSPORT_TIMEOUT` (retryable),
 * the requester's signal is `RUN_ABORTED`, a closed transport or connection is `TRANSPORT_CLOSED`,
 * and a payload that is not JSON, or too large, either way is `TRANSPORT_BAD_MESSAGE`.
 *
 * **Services.** `serve` subscribes in a queue group (default: the subject), so the members share
 * the requests; with `listener`, each `serve` is an endpoint of a NATS micro service instead, on
 * the same subject and queue group. A request that cannot be decoded gets a `TRANSPORT_BAD_MESSAGE` reply and a log
 * line; one without a reply subject is dropped with a log line; a handler that throws or rejects
 * answers its error as data. The handler's signal aborts when the transport closes, and, for a
 * service served `cancellable`, when the requester gives up.
 *
 * **Cancels.** When a request's `signal` aborts before its reply, the requester publishes an empty
 * message on `Subject.cancel(subject)` with the header `Redflow-Cancel` set to the request's reply
 * subject, and its `Redflow-Idempotency-Key` when it had one. Every member of a `cancellable`
 * service listens there (no queue group) and aborts the signal of the handlers it runs for that
 * request, or for any request with that key: a call re-sent after a lost reply is stopped on every
 * worker it reached.
 *
 * The server learns of a new service or subscription asynchronously: before another connection
 * counts on it, `await nc.flush()`.
 *
 * **Ownership.** The connection is the caller's: `close()` drains this transport's subscriptions,
 * ends its pending requests with `TRANSPORT_CLOSED`, aborts its running handlers and waits briefly
 * for their replies, but leaves the connection open, unless `ownsConnection` is set.
 *
 * @throws RedflowError `TRANSPORT_BAD_MESSAGE` when `maxPayloadBytes` is not a positive integer.
 *
 * @example
 * ```ts
 * const nc = await connectNats({ servers: '127.0.0.1:4222' });
 * const transport = createNatsTransport(nc);
 * transport.serve('redflow.tool.add', ({ a, b }: { a: number; b: number }) => a + b);
 * const reply = await transport.request('redflow.tool.add', { a: 1, b: 2 }, { timeoutMs: 1000 });
 * await transport.close();
 * await nc.drain();
 * ```
 */
export function createNatsTransport(nc: NatsConnection, options: NatsTransportOptions = {}): Transport {
  const codec = options.codec ?? jsonCodec;
  const log = options.log ?? defaultLog;
  const closeGraceMs = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
  const configuredMax = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  if (!Number.isInteger(configuredMax) || configuredMax < 1) {
    throw new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `maxPayloadBytes must be a positive integer, got ${String(configuredMax)}`),
    );
  }
  // The server refuses anything over its max_payload; the client knows it once connected.
  const maxBytes = () => Math.min(configuredMax, nc.info?.max_payload ?? configuredMax);

  /** Requests waiting for a reply, so close() can end them. */
  const pending = new Set<(reply: Reply<unknown>) => void>();
  /** Subscriptions (and listeners) made here and still open. */
  const subscriptions = new Set<NatsListening>();
  /** Subscriptions being drained (unsubscribed services), so close() can wait for them. */
  const draining = new Set<Promise<void>>();
  /** Handlers still running: their signal, and their completion (reply sent or dropped). */
  const running = new Map<AbortController, Promise<void>>();
  let closed = false;
  let closing: Promise<void> | undefined;
  const mux = createRequestMux(nc);

  const report = (subject: string, what: string) => log(`redflow nats: ${subject}: ${what}`);
  const { decode, encode, readReply } = createPayloads(codec, maxBytes);

  /** Sends a reply; a reply that cannot be sent as it is becomes an error reply. Never throws. */
  const respond = (msg: Msg, reply: Reply<unknown>): void => {
    if (reply.ok) {
      const encoded = encode(reply.data, `the reply of ${msg.subject}`);
      if (!encoded.ok) return respond(msg, encoded);
      send(msg, encoded.bytes);
      return;
    }
    // An ErrorInfo is plain JSON and small: its encoding only fails for a huge message or a broken codec.
    const encoded = encode({ ok: false, error: reply.error }, `the error reply of ${msg.subject}`);
    const bytes = encoded.ok ? encoded.bytes : jsonCodec.encode({ ok: false, error: encoded.error });
    const hdrs = natsHeaders();
    try {
      hdrs.set(NatsHeader.Error, reply.error.code);
    } catch {
      // A code that cannot be a header value (a handler invented it): still mark the reply failed.
      hdrs.set(NatsHeader.Error, ErrorCode.TRANSPORT_BAD_MESSAGE);
    }
    send(msg, bytes, hdrs);
  };

  const send = (msg: Msg, bytes: Uint8Array, hdrs?: MsgHdrs): void => {
    try {
      msg.respond(bytes, hdrs === undefined ? undefined : { headers: hdrs });
    } catch (error) {
      report(msg.subject, `could not send the reply: ${messageOf(error)}`);
    }
  };

  /** Tells the members of `subject` to stop the request sent as `replySubject` (and its key's others). */
  const cancel = (subject: string, replySubject: string, idempotencyKey: string | undefined) => {
    try {
      const hdrs = natsHeaders();
      hdrs.set(Header.Cancel, replySubject);
      if (idempotencyKey !== undefined) hdrs.set(Header.IdempotencyKey, idempotencyKey);
      nc.publish(Subject.cancel(subject), Empty, { headers: hdrs });
    } catch (error) {
      report(subject, `could not send a cancel: ${messageOf(error)}`);
    }
  };

  /** Aborts the handlers of `calls` that a cancel names. */
  const cancelCalls = (calls: Map<string, RunningCall>, msg: Msg) => {
    const replySubject = msg.headers?.get(Header.Cancel) ?? '';
    const key = msg.headers?.get(Header.IdempotencyKey) ?? '';
    for (const [reply, call] of calls) {
      if (reply === replySubject || (key !== '' && call.idempotencyKey === key)) call.controller.abort(cancelledReason());
    }
  };

  /** Handles one request delivered to a service; `calls` tracks it when the service hears cancels. Never throws. */
  const handle = (msg: Msg, handler: RequestHandler<unknown, unknown>, calls: Map<string, RunningCall> | undefined) => {
    if (!msg.reply) {
      report(msg.subject, 'dropped a request without a reply subject');
      return;
    }
    const decoded = decode(msg.data, `the request on ${msg.subject}`);
    if (!decoded.ok) {
      report(msg.subject, `refused a request: ${decoded.reason}`);
      respond(msg, { ok: false, error: decoded.error });
      return;
    }
    const controller = new AbortController();
    if (closed) controller.abort(closedReason());
    const headers = readHeaders(msg.headers);
    let result: unknown;
    try {
      result = handler(decoded.value, { subject: msg.subject, headers, signal: controller.signal });
    } catch (error) {
      respond(msg, { ok: false, error: toErrorInfo(error, ErrorCode.TRANSPORT_BAD_MESSAGE) });
      return;
    }
    if (!isThenable(result)) {
      respond(msg, { ok: true, data: result });
      return;
    }
    const done = Promise.resolve(result).then(
      (data) => respond(msg, { ok: true, data }),
      (error: unknown) => respond(msg, { ok: false, error: toErrorInfo(error, ErrorCode.TRANSPORT_BAD_MESSAGE) }),
    );
    running.set(controller, done);
    const reply = msg.reply;
    calls?.set(reply, { controller, idempotencyKey: headers[Header.IdempotencyKey] });
    void done.finally(() => {
      running.delete(controller);
      calls?.delete(reply);
    });
  };

  return {
    request<Req, Res>(subject: string, data: Req, requestOptions: RequestOptions): Promise<Reply<Res>> {
      if (closed) return Promise.resolve(failure(ErrorCode.TRANSPORT_CLOSED, 'the transport is closed'));
      const { signal, timeoutMs } = requestOptions;
      if (signal?.aborted) return Promise.resolve(failure(ErrorCode.RUN_ABORTED, 'the request was aborted'));
      const payload = encode(data, `the request to ${subject}`);
      if (!payload.ok) return Promise.resolve(payload);
      let hdrs: MsgHdrs | undefined;
      try {
        hdrs = toNatsHeaders(requestOptions.headers);
      } catch (error) {
        return Promise.resolve(failure(ErrorCode.TRANSPORT_BAD_MESSAGE, `the headers of the request to ${subject} are invalid: ${messageOf(error)}`));
      }
      return new Promise<Reply<Res>>((resolve) => {
        /** The request's reply subject once sent: what a cancel names. */
        let sentAs: string | undefined;
        const settle = (reply: Reply<unknown>) => {
          if (!pending.delete(settle)) return;
          if (signal !== undefined) forgetOnAbort(signal, aborted);
          resolve(reply as Reply<Res>);
        };
        const aborted = () => {
          settle(failure(ErrorCode.RUN_ABORTED, 'the request was aborted'));
          if (sentAs !== undefined) cancel(subject, sentAs, requestOptions.headers?.[Header.IdempotencyKey]);
        };
        pending.add(settle);
        if (signal !== undefined) onAbort(signal, aborted);
        // After an abort or close() the request still ends (reply or timeout) in the mux; its
        // outcome is then ignored.
        const sent = (replySubject: string) => (sentAs = replySubject);
        void mux.request(subject, payload.bytes, hdrs, Math.max(1, Math.ceil(timeoutMs)), sent).then((outcome) => {
          switch (outcome.kind) {
            case 'reply':
              return settle(readReply(outcome.msg, subject));
            case 'timeout':
              return settle(failure(ErrorCode.TRANSPORT_TIMEOUT, `no reply on ${subject} within ${timeoutMs} ms`, undefined, true));
            case 'noResponders':
              // On a cluster a worker may be (re)starting: worth another try.
              return settle(failure(ErrorCode.TRANSPORT_NO_RESPONDER, `nothing answers on ${subject}`, 'start the actor that serves this subject', true));
            case 'denied':
              return settle(
                failure(
                  ErrorCode.TRANSPORT_PERMISSION_DENIED,
                  `NATS does not allow this connection to request ${subject}: ${outcome.reason}`,
                  'grant the user publish permission on the subject and subscribe permission on its inbox prefix (_INBOX.>)',
                ),
              );
            case 'closed':
              return settle(failure(ErrorCode.TRANSPORT_CLOSED, `the NATS connection closed before the reply from ${subject}`));
          }
        });
      });
    },

    serve<Req, Res>(subject: string, handler: RequestHandler<Req, Res>, serveOptions?: ServeOptions): Subscription {
      if (closed) {
        report(subject, 'not served: the transport is closed');
        return { unsubscribe: () => undefined };
      }
      const member = handler as RequestHandler<unknown, unknown>;
      const calls = serveOptions?.cancellable === true ? new Map<string, RunningCall>() : undefined;
      const queue = serveOptions?.queue ?? subject;
      const callback = (error: Error | null, msg: Msg) => {
        if (error) report(subject, `the service stopped: ${messageOf(error)}`);
        else handle(msg, member, calls);
      };
      const sub = options.listener === undefined ? subscribeOrThrow(nc, subject, { queue, callback }) : options.listener.listen(subject, queue, callback);
      subscriptions.add(sub);
      // Every member hears every cancel: only the one running the call has anything to abort.
      const cancels =
        calls &&
        subscribeOrThrow(nc, Subject.cancel(subject), {
          callback: (error, msg) => {
            if (error) report(Subject.cancel(subject), `cancels are no longer heard: ${messageOf(error)}`);
            else cancelCalls(calls, msg);
          },
        });
      if (cancels) subscriptions.add(cancels);
      return {
        unsubscribe() {
          if (!subscriptions.delete(sub)) return;
          // Draining answers the requests already delivered to this member instead of dropping them.
          const drained = sub.drain().catch(() => undefined);
          draining.add(drained);
          void drained.finally(() => {
            draining.delete(drained);
            if (cancels && subscriptions.delete(cancels)) cancels.unsubscribe();
          });
        },
      };
    },

    publish(subject: string, data: unknown, headers?: Headers): void {
      if (closed) return;
      const payload = encode(data, 'the message');
      if (!payload.ok) {
        report(subject, `dropped a published message: ${payload.error.message}`);
        return;
      }
      try {
        const hdrs = toNatsHeaders(headers);
        nc.publish(subject, payload.bytes, hdrs === undefined ? undefined : { headers: hdrs });
      } catch (error) {
        report(subject, `dropped a published message: ${messageOf(error)}`);
      }
    },

    subscribe(pattern: string, handler: (message: TransportMessage) => void): Subscription {
      if (closed) {
        report(pattern, 'not subscribed: the transport is closed');
        return { unsubscribe: () => undefined };
      }
      const sub = subscribeOrThrow(nc, pattern, {
        callback: (error, msg) => {
          if (error) {
            report(pattern, `the subscription stopped: ${messageOf(error)}`);
            return;
          }
          const decoded = decode(msg.data, 'the message');
          if (!decoded.ok) {
            report(msg.subject, `dropped a published message: ${decoded.reason}`);
            return;
          }
          try {
            handler({ subject: msg.subject, data: decoded.value, headers: readHeaders(msg.headers) });
          } catch (thrown) {
            report(msg.subject, `a subscriber failed: ${messageOf(thrown)}`);
          }
        },
      });
      subscriptions.add(sub);
      return {
        unsubscribe() {
          if (subscriptions.delete(sub)) sub.unsubscribe();
        },
      };
    },

    close(): Promise<void> {
      closing ??= (async () => {
        closed = true;
        for (const settle of [...pending]) settle(failure(ErrorCode.TRANSPORT_CLOSED, 'the transport closed before the reply'));
        mux.close();
        const open = [...subscriptions];
        subscriptions.clear();
        // Requests already delivered are still answered (drain; their handlers' signal is already
        // aborted), then the running handlers are told to stop and get a moment to reply.
        await Promise.allSettled([...open.map((sub) => sub.drain()), ...draining]);
        for (const controller of running.keys()) controller.abort(closedReason());
        await settledWithin([...running.values()], closeGraceMs);
        if (!nc.isClosed() && !nc.isDraining()) await nc.flush().catch(() => undefined);
        if (options.ownsConnection && !nc.isClosed() && !nc.isDraining()) await nc.drain().catch(() => undefined);
      })();
      return closing;
    },
  };
}

/** A handler running for a `cancellable` service: what a cancel aborts, and the key it may name. */
interface RunningCall {
  readonly controller: AbortController;
  readonly idempotencyKey: string | undefined;
}
