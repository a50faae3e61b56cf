import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { createRequestMux, type RequestMux } from '../requestMux.js';
import { storeUnavailable } from './storeUnavailable.js';

// The JetStream requests a core worker makes once per run (its run record's create and delete,
// the look for a log under its trace id), sent over one request mux per connection and read as
// data. nats.js's own request builds two or three Errors, stack traces and all, and a timer for
// every request, and its stream API throws (another Error) for the "no message" a new run's look
// always gets: per run, that was more than the requests themselves.

/** How long one of these requests waits for the server (nats.js's JetStream default). */
const REQUEST_TIMEOUT_MS = 5000;

const muxes = new WeakMap<NatsConnection, RequestMux>();
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The connection's request mux for these requests, made on first use (it lives as long as the connection). */
function muxOf(nc: NatsConnection): RequestMux {
  let mux = muxes.get(nc);
  if (mux === undefined) {
    mux = createRequestMux(nc);
    muxes.set(nc, mux);
  }
  return mux;
}

/** What the JetStream API answers: the result, or its error (`err_code` names it). */
interface ApiReply {
  readonly error?: { readonly code?: number; readonly err_code?: number; readonly description?: string };
  readonly seq?: number;
  readonly message?: { readonly data?: string; readonly seq?: number };
}

/** JetStream's codes for the answers read here. */
const JetStreamCode = {
  /** A stream or bucket that does not exist. */
  StreamNotFound: 10059,
  /** A message looked up that is not there. */
  NoMessageFound: 10037,
  /** A write whose expected last sequence of its subject is not the subject's. */
  WrongLastSequence: 10071,
} as const;

/**
 * One request; the reply as JSON, its error included (the caller judges it: an expected error such
 * as "no message" costs no Error). `LOG_STORE_UNAVAILABLE` (retryable) when there is no readable answer.
 */
async function request(nc: NatsConnection, subject: string, payload: Uint8Array, headers?: ReturnType<typeof natsHeaders>): Promise<ApiReply> {
  const outcome = await muxOf(nc).request(subject, payload, headers, REQUEST_TIMEOUT_MS);
  if (outcome.kind !== 'reply') throw storeUnavailable(`no answer on ${subject}`, new Error(outcome.kind === 'denied' ? outcome.reason : outcome.kind));
  try {
    return JSON.parse(decoder.decode(outcome.msg.data)) as ApiReply;
  } catch {
    throw storeUnavailable(`the answer on ${subject} is not JSON`, undefined);
  }
}

/** The server's refusal in `reply` as `LOG_STORE_UNAVAILABLE`. */
function refusal(reply: ApiReply, what: string): Error {
  const { error } = reply;
  return storeUnavailable(what, new Error(error?.description ?? `error ${error?.err_code ?? error?.code ?? ''}`));
}

/**
 * The last message on `subject` in `stream` as its leader holds it (the stream API's get, which only
 * the leader answers, unlike a direct get that any replica may answer from behind): its stream
 * sequence (a KV entry's revision) and data; null when there is none.
 *
 * @example
 * ```ts
 * const entry = await lastStoredOn(nc, 'KV_redflow-runs', '$KV.redflow-runs.t-1');
 * ```
 */
export function lastStoredOn(nc: NatsConnection, stream: string, subject: string): Promise<StoredMessage | null> {
  return storedMessage(nc, stream, { last_by_subj: subject }, `cannot read ${subject} in ${stream}`);
}

/**
 * The first message at or after stream sequence `fromSeq` on `subject` (wildcards allowed) in
 * `stream`, as its leader holds it; null when there is none.
 *
 * @example
 * ```ts
 * const next = await nextStoredOn(nc, 'REDFLOW_TRACE', 'redflow.log.t-1.>', 42);
 * ```
 */
export function nextStoredOn(nc: NatsConnection, stream: string, subject: string, fromSeq: number): Promise<StoredMessage | null> {
  return storedMessage(nc, stream, { next_by_subj: subject, seq: fromSeq }, `cannot read ${subject} in ${stream}`);
}

/** A stored message as the stream API's get gives it: its stream sequence and data. */
export interface StoredMessage {
  readonly seq: number;
  readonly data: Uint8Array;
}

async function storedMessage(nc: NatsConnection, stream: string, query: object, what: string): Promise<StoredMessage | null> {
  const reply = await request(nc, `$JS.API.STREAM.MSG.GET.${stream}`, encoder.encode(JSON.stringify(query)));
  const code = reply.error?.err_code;
  if (code === JetStreamCode.NoMessageFound || code === JetStreamCode.StreamNotFound) return null;
  if (reply.error !== undefined) throw refusal(reply, what);
  const data = reply.message?.data === undefined ? new Uint8Array(0) : Uint8Array.from(Buffer.from(reply.message.data, 'base64'));
  return { seq: reply.message?.seq ?? 0, data };
}

/**
 * Writes `key` of the KV bucket whose subjects start with `keyPrefix` (`$KV.<bucket>.`) if the key
 * was never written: its revision, or undefined when it was (deleted since or not: nats.js's
 * `kv.create` then tells which). Throws when the server refuses it otherwise or does not answer.
 *
 * @example
 * ```ts
 * const revision = (await createKvEntry(nc, '$KV.redflow-runs.', 't-1', bytes)) ?? (await runs.create('t-1', bytes));
 * ```
 */
export async function createKvEntry(nc: NatsConnection, keyPrefix: string, key: string, value: Uint8Array): Promise<number | undefined> {
  const headers = natsHeaders();
  headers.set('Nats-Expected-Last-Subject-Sequence', '0');
  const reply = await request(nc, `${keyPrefix}${key}`, value, headers);
  if (reply.error?.err_code === JetStreamCode.WrongLastSequence) return undefined;
  if (reply.error !== undefined || typeof reply.seq !== 'number') throw refusal(reply, `cannot write ${key}`);
  return reply.seq;
}

/**
 * Deletes `key` of the KV bucket whose subjects start with `keyPrefix`, as nats.js's `kv.delete`
 * does: a `DEL` marker that watchers see.
 *
 * @example
 * ```ts
 * await deleteKvEntry(nc, '$KV.redflow-runs.', 't-1');
 * ```
 */
export async function deleteKvEntry(nc: NatsConnection, keyPrefix: string, key: string): Promise<void> {
  const headers = natsHeaders();
  headers.set('KV-Operation', 'DEL');
  const reply = await request(nc, `${keyPrefix}${key}`, new Uint8Array(0), headers);
  if (reply.error !== undefined) throw refusal(reply, `cannot delete ${key}`);
}
