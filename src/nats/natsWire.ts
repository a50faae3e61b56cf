import { ClosedConnectionError, DrainingConnectionError, headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type Subscription as NatsSubscription } from '@nats-io/transport-node';
import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../errors.js';
import type { Headers, Reply } from '../actors/transport.js';
import type { PayloadCodec } from './codec.js';

// The NATS transport's wire format (natsTransport.ts): its headers, its payloads within the size
// limit, its replies, and the NATS calls whose failures it turns into coded errors.

/**
 * NATS header names of the transport's own wire format, defined once. Application headers
 * (`Header` in `transport.ts`) travel as NATS headers of the same name.
 */
export const NatsHeader = {
  /** On a reply: the request failed; the body is `{ ok: false, error }` and this is its code. */
  Error: 'Redflow-Error',
} as const;

/** Largest payload accepted or sent by default: 1 MiB (also nats-server's default `max_payload`). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/**
 * The transport's payloads: decoded and encoded with `codec` within the size limit `maxBytes()`
 * (the server's may change with the connection), and replies read back into a {@link Reply}. Each
 * says why a payload cannot be, as an error for the peer; none throws.
 *
 * @example
 * ```ts
 * const { decode, encode, readReply } = createPayloads(jsonCodec, () => 1024 * 1024);
 * const body = decode(msg.data, `the request on ${msg.subject}`);
 * ```
 */
export function createPayloads(codec: PayloadCodec, maxBytes: () => number) {
  /**
   * Decodes a payload within the size limit, or says why it cannot be: `error` for the peer,
   * `reason` for the log (which never quotes the payload).
   */
  const decode = (
    data: Uint8Array,
    what: string,
  ): { ok: true; value: unknown } | { ok: false; error: ErrorInfo; reason: string } => {
    const limit = maxBytes();
    if (data.length > limit) {
      const reason = `${data.length} bytes; the limit is ${limit}`;
      return { ok: false, error: errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `${what} is ${reason}`), reason };
    }
    try {
      return { ok: true, value: codec.decode(data) };
    } catch (error) {
      return {
        ok: false,
        error: errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `${what} is not valid JSON: ${messageOf(error)}`),
        reason: `not valid JSON in UTF-8 (${data.length} bytes)`,
      };
    }
  };

  /** Encodes a payload within the size limit, or says why it cannot be. */
  const encode = (value: unknown, what: string): { ok: true; bytes: Uint8Array } | { ok: false; error: ErrorInfo } => {
    let bytes: Uint8Array;
    try {
      bytes = codec.encode(value);
    } catch (error) {
      return {
        ok: false,
        error: errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `${what} cannot be sent as JSON: ${messageOf(error)}`, {
          hint: 'send plain objects, arrays, strings, numbers, booleans or null',
        }),
      };
    }
    const limit = maxBytes();
    if (bytes.length > limit) {
      return { ok: false, error: errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `${what} is ${bytes.length} bytes; the limit is ${limit}`) };
    }
    return { ok: true, bytes };
  };

  /** Reads a reply: the result, or the error it carries. */
  const readReply = (msg: Msg, subject: string): Reply<unknown> => {
    const body = decode(msg.data, `the reply from ${subject}`);
    if (!body.ok) return { ok: false, error: body.error };
    const code = msg.headers?.get(NatsHeader.Error) ?? '';
    if (code === '') return { ok: true, data: body.value };
    return { ok: false, error: asErrorInfo(body.value) ?? errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `the error reply from ${subject} (${code}) carries no error`) };
  };

  return { decode, encode, readReply };
}

/** The `error` of an `{ ok: false, error }` body, rebuilt field by field (nothing else is kept). */
function asErrorInfo(body: unknown): ErrorInfo | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message, hint, retryable, path } = error as Record<string, unknown>;
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  // A code from a newer peer is passed on as it is: codes are never renamed or reused.
  return errorInfo(code as ErrorCode, message, {
    hint: typeof hint === 'string' ? hint : undefined,
    retryable: retryable === true,
    path: typeof path === 'string' ? path : undefined,
  });
}

/** An error's message, for a log line or an error reply. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const noHeaders: Headers = Object.freeze({});

/** Application headers as NATS headers (none: undefined). */
export function toNatsHeaders(headers: Headers | undefined): MsgHdrs | undefined {
  if (headers === undefined) return undefined;
  const names = Object.keys(headers);
  if (names.length === 0) return undefined;
  const hdrs = natsHeaders();
  for (const name of names) hdrs.set(name, headers[name] as string);
  return hdrs;
}

/** A message's NATS headers as application headers, frozen. */
export function readHeaders(hdrs: MsgHdrs | undefined): Headers {
  if (hdrs === undefined) return noHeaders;
  const names = hdrs.keys();
  if (names.length === 0) return noHeaders;
  // fromEntries defines own properties: a header named `__proto__` cannot touch the prototype.
  return Object.freeze(Object.fromEntries(names.map((name) => [name, hdrs.get(name)])));
}

/** `nc.subscribe`, its failure a coded error: `TRANSPORT_CLOSED` on a closed connection, else `TRANSPORT_BAD_MESSAGE`. */
export function subscribeOrThrow(nc: NatsConnection, subject: string, opts: Parameters<NatsConnection['subscribe']>[1]): NatsSubscription {
  try {
    return nc.subscribe(subject, opts);
  } catch (error) {
    const closedNow = error instanceof ClosedConnectionError || error instanceof DrainingConnectionError;
    throw new RedflowError(
      errorInfo(closedNow ? ErrorCode.TRANSPORT_CLOSED : ErrorCode.TRANSPORT_BAD_MESSAGE, `cannot subscribe to ${subject}: ${messageOf(error)}`, {
        hint: closedNow ? 'the NATS connection is closed' : 'subjects are `.`-separated tokens; `*` and `>` are wildcards',
      }),
      { cause: error },
    );
  }
}

/** Waits for `promises`, but no longer than `ms`. */
export async function settledWithin(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (promises.length === 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([Promise.allSettled(promises), grace]);
  clearTimeout(timer);
}

/** Whether a handler's result is a promise to wait for. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** A failed reply. */
export function failure(code: ErrorCode, message: string, hint?: string, retryable?: boolean): Reply<never> {
  return { ok: false, error: errorInfo(code, message, { hint, retryable }) };
}

/** Why a call ends when its transport closes. */
export function closedReason(): RedflowError {
  return new RedflowError(errorInfo(ErrorCode.TRANSPORT_CLOSED, 'the transport closed'));
}

/** Why a handler's call ends when its requester cancels it. */
export function cancelledReason(): RedflowError {
  return new RedflowError(errorInfo(ErrorCode.RUN_ABORTED, 'the requester cancelled the call'));
}
