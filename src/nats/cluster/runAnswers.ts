import type { NatsConnection } from '@nats-io/transport-node';
import { validators, describeSchemaErrors } from '../../contracts/schemas.js';
import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { Subject } from '../../actors/subjects.js';
import { createNatsTransport } from '../natsTransport.js';
import type { Transport, Subscription } from '../../actors/transport.js';
import type { WaitAnswer } from '../../events/pendingWait.js';
import type { AnswerRequest, ApprovalRequest, ToolResultRequest } from '../../server/apiTypes.js';
import { answerOfApproval, answerOfHuman, answerOfToolResult } from '../../server/waitAnswers.js';
import { MAX_ABORT_REASON_LENGTH } from './runAborts.js';

/**
 * What a client sends on `<prefix>.runs.answer.<traceId>`: the body of the HTTP API's
 * `/approval` or `/tool-results`, with which of the two it is.
 */
export type RunAnswerRequest =
  | (ApprovalRequest & { readonly kind: 'approval' })
  | (ToolResultRequest & { readonly kind: 'tool-result' })
  | (AnswerRequest & { readonly kind: 'answer' })
  /** Ends a parked run as aborted (what an abort of a waiting run becomes: no worker holds it to hear the abort subject). */
  | { readonly kind: 'abort'; readonly reason?: string };

/** What the core worker that took the answer replies: it resumes the run with it. */
export interface RunAnswerReply {
  readonly accepted: true;
  readonly owner: string;
}

/** The answer as a request on the wire (an expiry is a core worker's own, never sent). */
export function answerRequest(answer: Exclude<WaitAnswer, { kind: 'expire' }>): RunAnswerRequest {
  if (answer.kind === 'abort') return { kind: 'abort', ...(answer.reason !== undefined && { reason: answer.reason }) };
  const target = {
    ...(answer.idempotencyKey !== undefined && { idempotencyKey: answer.idempotencyKey }),
    ...(answer.iteration !== undefined && { iteration: answer.iteration }),
  };
  if (answer.kind === 'approval') {
    return { kind: 'approval', decision: answer.approved ? 'approve' : 'deny', ...(answer.reason !== undefined && { reason: answer.reason }), ...target };
  }
  if (answer.kind === 'human') return { kind: 'answer', text: answer.text, ...target };
  return answer.result.ok
    ? { kind: 'tool-result', ok: true, output: answer.result.output, ...target }
    : { kind: 'tool-result', ok: false, error: { message: answer.result.error.message }, ...target };
}

/**
 * Reads an answer request with the HTTP API's schemas (a client tool's failure is recorded as
 * `TOOL_FAILED` with its message, whatever the client sends).
 *
 * @throws RedflowError `TRANSPORT_BAD_MESSAGE` saying what is wrong.
 */
export function readAnswerRequest(request: unknown): WaitAnswer {
  const bad = (why: string) =>
    new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_BAD_MESSAGE, `not a run answer request: ${why}`, {
        hint: 'send {"kind": "approval", "decision": "approve" | "deny", …} or {"kind": "tool-result", "ok": …} (schemas/http/approval-request.schema.json, tool-result-request.schema.json)',
      }),
    );
  if (typeof request !== 'object' || request === null || Array.isArray(request)) throw bad('not a JSON object');
  const { kind, ...body } = request as Record<string, unknown>;
  if (kind === 'approval') {
    if (!validators.approvalRequest(body)) throw bad(describeSchemaErrors(validators.approvalRequest.errors));
    return answerOfApproval(body as unknown as ApprovalRequest);
  }
  if (kind === 'tool-result') {
    if (!validators.toolResultRequest(body)) throw bad(describeSchemaErrors(validators.toolResultRequest.errors));
    return answerOfToolResult(body as unknown as ToolResultRequest);
  }
  if (kind === 'answer') {
    if (!validators.answerRequest(body)) throw bad(describeSchemaErrors(validators.answerRequest.errors));
    return answerOfHuman(body as unknown as AnswerRequest);
  }
  if (kind === 'abort') {
    const { reason, ...rest } = body;
    if (Object.keys(rest).length > 0) throw bad(`unknown property '${Object.keys(rest)[0] ?? ''}' in an abort`);
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_ABORT_REASON_LENGTH)) {
      throw bad(`"reason" is not a string of at most ${MAX_ABORT_REASON_LENGTH} characters`);
    }
    return { kind: 'abort', ...(reason !== undefined && { reason }) };
  }
  throw bad('"kind" is none of "approval", "tool-result", "answer", "abort"');
}

/**
 * Serves the answers to waiting runs for one core worker: every core worker is in the queue group
 * `core`, so each answer goes to one of them, which checks it against the run's log and resumes
 * the run (`take`). A refusal goes back to the client as a coded error.
 *
 * @example
 * ```ts
 * const answers = serveRunAnswers(transport, 'redflow', (traceId, answer) => takeAnswer(traceId, answer));
 * ```
 */
export function serveRunAnswers(
  transport: Transport,
  prefix: string,
  take: (traceId: string, answer: WaitAnswer) => Promise<RunAnswerReply>,
): Subscription {
  const traceToken = Subject.runAnswer(prefix, '').split('.').length - 1;
  return transport.serve<unknown, RunAnswerReply>(
    Subject.runAnswers(prefix),
    async (request, { subject }) => take(subject.split('.')[traceToken] ?? '', readAnswerRequest(request)),
    { queue: 'core' },
  );
}

/**
 * Gives a waiting run on the cluster its answer: one core worker takes it and resumes the run.
 * Refusals come back with their codes (`RUN_NOT_FOUND`, `RUN_NOT_WAITING`, `WAIT_ALREADY_ANSWERED`,
 * `WAIT_ANSWER_MISMATCH`, `RUN_ALREADY_FINISHED`, `WAIT_EXPIRED`) and are thrown.
 *
 * @throws RedflowError `TRANSPORT_NO_RESPONDER` when no core worker runs.
 * @example
 * ```ts
 * await requestRunAnswer(nc, 'redflow', traceId, { kind: 'approval', approved: true });
 * ```
 */
export async function requestRunAnswer(
  nc: NatsConnection,
  prefix: string,
  traceId: string,
  answer: Exclude<WaitAnswer, { kind: 'expire' }>,
  timeoutMs = 10_000,
): Promise<RunAnswerReply> {
  const transport = createNatsTransport(nc, { log: () => undefined });
  try {
    const reply = await transport.request<RunAnswerRequest, RunAnswerReply>(Subject.runAnswer(prefix, traceId), answerRequest(answer), { timeoutMs });
    if (!reply.ok) {
      if (reply.error.code === ErrorCode.TRANSPORT_NO_RESPONDER || reply.error.code === ErrorCode.TRANSPORT_TIMEOUT) {
        throw new RedflowError(
          errorInfo(ErrorCode.TRANSPORT_NO_RESPONDER, `no core worker took the answer to run ${traceId}`, {
            hint: 'is a core worker running (redflow worker <flow> --role core)?',
            retryable: true,
          }),
        );
      }
      throw new RedflowError(reply.error);
    }
    return reply.data;
  } finally {
    await transport.close();
  }
}
