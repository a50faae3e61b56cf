import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { GivenAnswer } from '../events/pendingWait.js';
import { ApiRoute, type AnswerRequest, type ApiErrorBody, type ApprovalRequest, type RunResponse, type ToolResultRequest } from '../server/apiTypes.js';

/**
 * Posts an answer to a run on a `redflow serve` (`POST /api/runs/:traceId/approval`,
 * `/tool-results` or `/answer`) and returns the run as the server answers it. A refusal is thrown with the
 * server's own code (`RUN_NOT_WAITING`, `WAIT_ALREADY_ANSWERED`, `RUN_NOT_FOUND`, …) and hint.
 *
 * @example
 * ```ts
 * const run = await postAnswer('http://127.0.0.1:4800', traceId, { kind: 'approval', approved: true });
 * ```
 */
export async function postAnswer(server: string, traceId: string, answer: GivenAnswer, token: string | undefined): Promise<RunResponse> {
  let base: URL;
  try {
    base = new URL(server);
  } catch {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `--server must be a URL such as http://127.0.0.1:4800, not "${server}"`));
  }
  const target = {
    ...(answer.idempotencyKey !== undefined && { idempotencyKey: answer.idempotencyKey }),
    ...(answer.iteration !== undefined && { iteration: answer.iteration }),
  };
  const [route, body] =
    answer.kind === 'human'
      ? [ApiRoute.runAnswer(traceId), { text: answer.text, ...target } satisfies AnswerRequest]
      : answer.kind === 'approval'
      ? [ApiRoute.runApproval(traceId), { decision: answer.approved ? 'approve' : 'deny', ...(answer.reason !== undefined && { reason: answer.reason }), ...target } satisfies ApprovalRequest]
      : [
          ApiRoute.runToolResults(traceId),
          (answer.result.ok
            ? { ok: true, output: answer.result.output, ...target }
            : { ok: false, error: { message: answer.result.error.message }, ...target }) satisfies ToolResultRequest,
        ];
  let response: Response;
  try {
    response = await fetch(new URL(route, base), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token !== undefined && { Authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new RedflowError(
      errorInfo(ErrorCode.TRANSPORT_CONNECT_FAILED, `cannot reach ${base.origin}: ${(error as Error).message}`, { hint: 'is `redflow serve` running there?' }),
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return parsed as RunResponse;
  const error = (parsed as Partial<ApiErrorBody> | undefined)?.error;
  const code = error && Object.hasOwn(ErrorCode, error.code) ? error.code : ErrorCode.HTTP_INTERNAL_ERROR;
  throw new RedflowError(
    errorInfo(code, `${base.origin} answered ${response.status}: ${error?.message ?? text.slice(0, 200)}`, {
      hint: error?.hint ?? (response.status === 401 ? 'give the server\'s token with --token or REDFLOW_TOKEN' : undefined),
    }),
  );
}
