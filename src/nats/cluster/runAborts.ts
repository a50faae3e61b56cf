import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription as NatsSubscription } from '@nats-io/transport-node';
import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../../errors.js';
import { Subject } from '../../actors/subjects.js';
import { jsonCodec } from '../codec.js';
import { DEFAULT_MAX_PAYLOAD_BYTES, NatsHeader, createNatsTransport } from '../natsTransport.js';

/** What a client sends on `<prefix>.runs.abort.<traceId>` (the payload may also be empty). */
export interface RunAbortRequest {
  /** Recorded in the run's outcome: `the run was aborted: <reason>`. */
  readonly reason?: string;
}

/** What the core worker that owns the run answers. */
export interface RunAbortReply {
  readonly aborted: true;
  /** The core worker that aborted it. */
  readonly owner: string;
}

/** The longest abort reason accepted: it ends up in the run's log. */
export const MAX_ABORT_REASON_LENGTH = 1000;

/**
 * Reads an abort request; a reason that is not a short string is refused, never truncated. A
 * payload over `maxBytes` is refused before it is parsed, as the transport refuses one on any
 * other subject.
 */
function readAbortRequest(data: Uint8Array, subject: string, maxBytes: number): { ok: true; reason?: string } | { ok: false; error: ErrorInfo } {
  if (data.length > maxBytes) {
    return { ok: false, error: errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `the request on ${subject} is ${data.length} bytes; the limit is ${maxBytes}`) };
  }
  const bad = (why: string) => ({
    ok: false as const,
    error: errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `not a run abort request: ${why}`, { hint: 'send nothing, or {"reason"?: string}' }),
  });
  let value: unknown;
  try {
    value = jsonCodec.decode(data);
  } catch {
    return bad('not JSON in UTF-8');
  }
  if (value === undefined) return { ok: true };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('not a JSON object');
  const { reason } = value as Record<string, unknown>;
  if (reason === undefined) return { ok: true };
  if (typeof reason !== 'string') return bad('"reason" is not a string');
  if (reason.length > MAX_ABORT_REASON_LENGTH) return bad(`"reason" is longer than ${MAX_ABORT_REASON_LENGTH} characters`);
  return { ok: true, reason };
}

/** A run a core worker owns, as far as aborting it goes (a `RunHandle` is one). */
export interface AbortableRun {
  abort(reason?: string): void;
}

/**
 * Serves aborts for the runs one core worker owns. Every core worker subscribes to every run's
 * abort subject *without* a queue group: a queue group would hand the request to one worker
 * chosen at random, most likely not the owner. Only the worker for which `findRun` returns the
 * run answers; the others stay silent, so the requester hears one answer or none at all (then
 * nobody owns the run right now: it has ended, or is between owners).
 *
 * @example
 * ```ts
 * const aborts = serveRunAborts(nc, 'redflow', 'core-1', (traceId) => owned.get(traceId)?.handle);
 * ```
 */
export function serveRunAborts(
  nc: NatsConnection,
  prefix: string,
  owner: string,
  findRun: (traceId: string) => AbortableRun | undefined,
  log: (line: string) => void = () => undefined,
): NatsSubscription {
  const traceToken = Subject.runAbort(prefix, '').split('.').length - 1;
  return nc.subscribe(Subject.runAborts(prefix), {
    callback: (error, msg) => {
      if (error) {
        log(`abort subscription stopped: ${error.message}`);
        return;
      }
      const traceId = msg.subject.split('.')[traceToken] ?? '';
      const run = findRun(traceId);
      // Only the owner speaks, even to refuse a bad request: an answer from anyone else would
      // make the requester believe the run was found.
      if (!run) return;
      // The transport's limit: 1 MiB, or the server's max_payload when smaller.
      const request = readAbortRequest(msg.data, msg.subject, Math.min(DEFAULT_MAX_PAYLOAD_BYTES, nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD_BYTES));
      if (!request.ok) {
        log(`run ${traceId}: refused an abort request: ${request.error.message}`);
        reply(msg, request);
        return;
      }
      run.abort(request.reason);
      log(`run ${traceId} aborted on request${request.reason === undefined ? '' : `: ${request.reason}`}`);
      reply(msg, { ok: true, data: { aborted: true, owner } satisfies RunAbortReply });
    },
  });
}

/** Sends a reply in the NATS transport's wire format, so `Transport.request` reads it. */
function reply(msg: Msg, answer: { ok: true; data: unknown } | { ok: false; error: ErrorInfo }): void {
  if (!msg.reply) return;
  try {
    if (answer.ok) {
      msg.respond(jsonCodec.encode(answer.data));
    } else {
      const hdrs = natsHeaders();
      hdrs.set(NatsHeader.Error, answer.error.code);
      msg.respond(jsonCodec.encode({ ok: false, error: answer.error }), { headers: hdrs });
    }
  } catch {
    // The connection is closing: the requester will see no answer, as if the owner had gone.
  }
}

/** How an abort request ended. */
export type AbortRequestOutcome =
  /** The owner of the run aborted it (its `run.failed` event follows). */
  | { readonly kind: 'aborting'; readonly owner: string }
  /** Nobody answered: no core worker owns the run right now. */
  | { readonly kind: 'unanswered' };

/**
 * Asks the core worker that owns a run to abort it. Resolves `unanswered` when no core worker
 * answers within `timeoutMs` (or none listens at all); throws when the owner refused the request.
 *
 * @example
 * ```ts
 * const outcome = await requestRunAbort(nc, 'redflow', traceId, { reason: 'user asked' });
 * ```
 */
export async function requestRunAbort(
  nc: NatsConnection,
  prefix: string,
  traceId: string,
  request: RunAbortRequest,
  timeoutMs = 2000,
): Promise<AbortRequestOutcome> {
  const transport = createNatsTransport(nc, { log: () => undefined });
  try {
    const answer = await transport.request<RunAbortRequest, RunAbortReply>(Subject.runAbort(prefix, traceId), request, { timeoutMs });
    if (answer.ok) return { kind: 'aborting', owner: answer.data.owner };
    if (answer.error.code === ErrorCode.TRANSPORT_TIMEOUT || answer.error.code === ErrorCode.TRANSPORT_NO_RESPONDER) {
      return { kind: 'unanswered' };
    }
    throw new RedflowError(answer.error);
  } finally {
    await transport.close();
  }
}
