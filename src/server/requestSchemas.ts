import type { ErrorObject } from 'ajv';
import { describeSchemaErrors, validators } from '../contracts/schemas.js';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import type { AbortRunRequest, AnswerRequest, ForkRunRequest, ApprovalRequest, StartRunRequest, ToolResultRequest } from './apiTypes.js';

type Validate = ((value: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Checks a parsed body against its schema (schemas/http/): 400 `HTTP_BODY_INVALID` saying what is wrong. */
function checked<T>(validate: () => Validate, schemaFile: string): (value: unknown) => T {
  return (value) => {
    const check = validate();
    if (check(value)) return value as T;
    const first = check.errors?.[0];
    throw new ApiError(
      errorInfo(ErrorCode.HTTP_BODY_INVALID, `the body does not match ${schemaFile}: ${describeSchemaErrors(check.errors)}`, {
        hint: `see schemas/${schemaFile} for what this route takes`,
        ...(first !== undefined && first.instancePath !== '' && { path: first.instancePath }),
      }),
    );
  };
}

/** The body of `POST /api/runs`, checked against `schemas/http/start-run-request.schema.json`. */
export const parseStartRunRequest = checked<StartRunRequest>(() => validators.startRunRequest, 'http/start-run-request.schema.json');

/** The body of `POST /api/runs/:traceId/abort`, checked against `schemas/http/abort-run-request.schema.json`. */
export const parseAbortRunRequest = checked<AbortRunRequest>(() => validators.abortRunRequest, 'http/abort-run-request.schema.json');

/** The body of `POST /api/runs/:traceId/approval`, checked against `schemas/http/approval-request.schema.json`. */
export const parseApprovalRequest = checked<ApprovalRequest>(() => validators.approvalRequest, 'http/approval-request.schema.json');

/** The body of `POST /api/runs/:traceId/answer`, checked against `schemas/http/answer-request.schema.json`. */
export const parseAnswerRequest = checked<AnswerRequest>(() => validators.answerRequest, 'http/answer-request.schema.json');

/** The body of `POST /api/runs/:traceId/tool-results`, checked against `schemas/http/tool-result-request.schema.json`. */
export const parseToolResultRequest = checked<ToolResultRequest>(() => validators.toolResultRequest, 'http/tool-result-request.schema.json');

/**
 * The body of `POST /api/runs/:traceId/fork`, checked against `schemas/http/fork-run-request.schema.json`.
 *
 * @example
 * ```ts
 * const request = parseForkRunRequest({ at: 2, model: { model: 'gpt-4o-mini' } }); // 400 HTTP_BODY_INVALID for { }
 * ```
 */
export const parseForkRunRequest = checked<ForkRunRequest>(() => validators.forkRunRequest, 'http/fork-run-request.schema.json');
