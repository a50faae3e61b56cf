import type { ErrorObject } from 'ajv';
import { describeSchemaErrors, validators } from '../contracts/schemas.js';
import { ErrorCode, errorInfo } from '../errors.js';
import { ApiError } from './apiErrors.js';
import type { AbortRunRequest, StartRunRequest } from './apiTypes.js';

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
