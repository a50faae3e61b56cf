import { ErrorCode, errorInfo } from '../errors.js';
import type { WaitAnswer } from '../events/pendingWait.js';
import type { AnswerRequest, ApprovalRequest, ToolResultRequest } from './apiTypes.js';

/**
 * The answers the HTTP API takes, as the runtime's {@link WaitAnswer}s. Kept apart from the routes:
 * a client (the CLI, a step service) builds the same answers.
 */

/** `POST /api/runs/:traceId/approval`'s body as an answer. */
export function answerOfApproval(request: ApprovalRequest): WaitAnswer {
  return {
    kind: 'approval',
    approved: request.decision === 'approve',
    ...(request.reason !== undefined && { reason: request.reason }),
    ...(request.idempotencyKey !== undefined && { idempotencyKey: request.idempotencyKey }),
    ...(request.iteration !== undefined && { iteration: request.iteration }),
  };
}

/** `POST /api/runs/:traceId/answer`'s body as an answer: a person's answer to the model's question. */
export function answerOfHuman(request: AnswerRequest): WaitAnswer {
  return {
    kind: 'human',
    text: request.text,
    ...(request.idempotencyKey !== undefined && { idempotencyKey: request.idempotencyKey }),
    ...(request.iteration !== undefined && { iteration: request.iteration }),
  };
}

/** `POST /api/runs/:traceId/tool-results`'s body as an answer: a failure is recorded as `TOOL_FAILED` with the client's message. */
export function answerOfToolResult(request: ToolResultRequest): WaitAnswer {
  return {
    kind: 'client',
    result: request.ok ? { ok: true, output: request.output } : { ok: false, error: errorInfo(ErrorCode.TOOL_FAILED, request.error.message) },
    ...(request.idempotencyKey !== undefined && { idempotencyKey: request.idempotencyKey }),
    ...(request.iteration !== undefined && { iteration: request.iteration }),
  };
}
