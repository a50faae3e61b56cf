import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { SchemaFile, describeSchemaErrors, loadSchema } from '../contracts/schemas.js';
import { ApiError, ErrorCode, errorInfo, type FieldError } from '../errors.js';
import type { ReactStepRequest } from './reactStepTypes.js';

let validate: ValidateFunction<ReactStepRequest> | undefined;

/**
 * Compiled on first use with `allErrors`, unlike the other contracts: a client of this endpoint
 * fixes every field in one round trip instead of one error per request.
 */
function validator(): ValidateFunction<ReactStepRequest> {
  if (validate !== undefined) return validate;
  const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: true });
  return (validate = ajv.compile<ReactStepRequest>(loadSchema(SchemaFile.reactStepRequest)));
}

/** One error per field, in the schema's words: `/llm_config/temperature` must be <= 2. */
function fieldErrors(errors: readonly ErrorObject[]): FieldError[] {
  const seen = new Set<string>();
  const fields: FieldError[] = [];
  for (const error of errors) {
    // anyOf reports each branch's failure and then its own: the branches say more.
    if (error.keyword === 'anyOf') continue;
    const path =
      error.keyword === 'required'
        ? `${error.instancePath}/${(error.params as { missingProperty: string }).missingProperty}`
        : error.keyword === 'additionalProperties'
          ? `${error.instancePath}/${(error.params as { additionalProperty: string }).additionalProperty}`
          : error.instancePath || '/';
    const message =
      error.keyword === 'required'
        ? 'is required'
        : error.keyword === 'additionalProperties'
          ? 'is not a field of this request'
          : describeSchemaErrors([{ ...error, instancePath: '' }]).replace(/^\(root\) /, '');
    const key = `${path} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    fields.push({ path, message });
  }
  return fields;
}

/**
 * Checks the body of `POST /api/agent/react_step` against schemas/http/react-step-request.schema.json:
 * 400 `HTTP_BODY_INVALID` listing every field that is wrong.
 *
 * @example
 * ```ts
 * const request = parseReactStepRequest(await readJsonBody(req, { maxBytes }));
 * ```
 */
export function parseReactStepRequest(body: unknown): ReactStepRequest {
  const check = validator();
  if (check(body)) return body;
  const fields = fieldErrors(check.errors ?? []);
  const summary = fields
    .slice(0, 3)
    .map((field) => `${field.path} ${field.message}`)
    .join('; ');
  throw new ApiError(
    errorInfo(ErrorCode.HTTP_BODY_INVALID, `the body does not match http/react-step-request.schema.json: ${summary}${fields.length > 3 ? `; and ${fields.length - 3} more` : ''}`, {
      hint: 'every wrong field is listed in "fields"; see schemas/http/react-step-request.schema.json',
      ...(fields[0] !== undefined && { path: fields[0].path }),
    }),
    { fields },
  );
}
