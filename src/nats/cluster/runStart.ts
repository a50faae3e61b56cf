import type { ParentCall } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { isValidConversationId } from '../../actors/memory.js';
import type { Headers } from '../../actors/transport.js';
import { isValidTraceId } from '../../runtime/ids.js';
import { TRACEPARENT_HEADER, formatTraceparent, parseTraceparent } from '../../telemetry/traceContext.js';

// A run start on `<prefix>.runs.start`, as core workers take it: the request, its checks, the reply.

/** What a client sends on `<prefix>.runs.start`. */
export interface RunStartRequest {
  readonly input: unknown;
  /** Chosen by the client so it can listen to the run's trace before it starts. */
  readonly traceId?: string;
  readonly conversationId?: string;
  /** The id of the flow the client means: refused when the workers run another one. */
  readonly flowId?: string;
  /** This run's timeout in ms (default: the worker's `timeoutMs`); kept by a worker that takes it over. */
  readonly timeoutMs?: number;
  /** The call of another run that starts this one as its subagent (recorded in `run.started`). */
  readonly parent?: ParentCall;
}

/** The longest run timeout a client may ask for: 24 hours. */
const MAX_RUN_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** Refuses a start request that is not `{ input, traceId?, conversationId?, flowId?, timeoutMs?, parent? }`. */
export function checkStartRequest(request: unknown): asserts request is RunStartRequest {
  const bad = (why: string) =>
    new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `not a run start request: ${why}`, {
        hint: 'send {"input": …, "traceId"?: string, "conversationId"?: string, "flowId"?: string, "timeoutMs"?: number, "parent"?: {"traceId", "iteration", "idempotencyKey", "tool"}}',
      }),
    );
  if (typeof request !== 'object' || request === null || Array.isArray(request)) throw bad('not a JSON object');
  const { traceId, conversationId, flowId, timeoutMs, parent } = request as Record<string, unknown>;
  if (!('input' in request)) throw bad('no "input"');
  if (traceId !== undefined && typeof traceId !== 'string') throw bad('"traceId" is not a string');
  if (conversationId !== undefined && (typeof conversationId !== 'string' || !isValidConversationId(conversationId))) {
    throw bad('"conversationId" is not a valid conversation id');
  }
  if (flowId !== undefined && typeof flowId !== 'string') throw bad('"flowId" is not a string');
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_RUN_TIMEOUT_MS)) {
    throw bad(`"timeoutMs" is not an integer from 1 to ${MAX_RUN_TIMEOUT_MS}`);
  }
  if (parent !== undefined && !isParentCall(parent)) throw bad('"parent" is not {"traceId", "iteration", "idempotencyKey", "tool", "traceparent"?}');
}

/**
 * A subagent's `parent` with the trace context of the call, which the start carries as its
 * `traceparent` header (see `clusterSubagents`): logged in `run.started`, it places every
 * stretch of the run in the caller's trace. A header that is not a valid one is ignored.
 */
export function withCallContext(parent: ParentCall, headers: Headers): ParentCall {
  const call = parseTraceparent(headers[TRACEPARENT_HEADER]);
  return call === undefined ? parent : { ...parent, traceparent: formatTraceparent(call) };
}

/** True for a `parent` as `run.started` records it (the agent-event schema's ParentCall). */
function isParentCall(value: unknown): value is ParentCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { traceId, iteration, idempotencyKey, tool, traceparent, ...rest } = value as Record<string, unknown>;
  const context = typeof traceparent === 'string' ? parseTraceparent(traceparent) : undefined;
  return (
    Object.keys(rest).length === 0 &&
    // As the log holds it: a version-00 value, written as formatTraceparent writes it.
    (traceparent === undefined || (context !== undefined && formatTraceparent(context) === traceparent)) &&
    isValidTraceId(traceId) &&
    typeof iteration === 'number' &&
    Number.isInteger(iteration) &&
    iteration >= 1 &&
    typeof idempotencyKey === 'string' &&
    idempotencyKey.length > 0 &&
    idempotencyKey.length <= 200 &&
    typeof tool === 'string' &&
    /^[A-Za-z0-9_-]{1,64}$/.test(tool)
  );
}

/** The refusal of a start whose trace id belongs to another run. */
export function traceIdTaken(traceId: string, why: string): RedflowError {
  return new RedflowError(
    errorInfo(ErrorCode.RUN_TRACE_ID_TAKEN, `trace id ${traceId} is taken by another run: ${why}`, {
      hint: 'start the run with a new trace id (or none: one is made up); to follow or replay that run, use redflow tail or replay with its trace id',
    }),
  );
}

/** What a core worker answers: the run it started. */
export interface RunStartReply {
  readonly traceId: string;
  readonly owner: string;
}
