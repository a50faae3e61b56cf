import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../errors.js';
import type { FlowDiagnostic } from '../flows/diagnostics.js';
import { FlowInvalidError } from '../flows/loadValidFlow.js';
import type { ApiErrorBody } from './apiTypes.js';
import { publicErrorInfo } from './publicText.js';

/**
 * The HTTP status of each error code the API answers with. A code missing here is a server-side
 * failure (500). Kept as one table so a code always gets the same status, whichever route throws it.
 */
const STATUS_BY_CODE: Partial<Readonly<Record<ErrorCode, number>>> = {
  [ErrorCode.HTTP_BODY_NOT_JSON]: 400,
  [ErrorCode.HTTP_BODY_INVALID]: 400,
  [ErrorCode.REACT_STEP_HISTORY_INVALID]: 400,
  [ErrorCode.REACT_STEP_MODEL_UNKNOWN]: 400,
  [ErrorCode.CONTEXT_BUDGET_EXCEEDED]: 400,
  // The history is well formed: it disagrees with what the session's log recorded.
  [ErrorCode.REACT_STEP_HISTORY_CONFLICT]: 409,
  [ErrorCode.HTTP_QUERY_INVALID]: 400,
  [ErrorCode.FLOW_ID_INVALID]: 400,
  [ErrorCode.RUN_INPUT_INVALID]: 400,
  [ErrorCode.RUN_INPUT_TOO_DEEP]: 400,
  [ErrorCode.RUN_INPUT_TOO_LARGE]: 400,
  [ErrorCode.FLOW_FILE_OUTSIDE_ROOTS]: 400,
  [ErrorCode.MEMORY_KEY_INVALID]: 400,
  [ErrorCode.MODEL_CONFIG_INVALID]: 400,
  [ErrorCode.MODEL_KEY_MISSING]: 400,
  // A flow's answersFile that is not there: the flow's fault, not a missing resource of the API.
  [ErrorCode.ANSWERS_FILE_NOT_FOUND]: 400,
  [ErrorCode.TOOL_MODULE_INVALID]: 400,
  [ErrorCode.TOOL_CONFIG_INVALID]: 400,
  [ErrorCode.HTTP_UNAUTHORIZED]: 401,
  [ErrorCode.HTTP_HOST_NOT_ALLOWED]: 403,
  [ErrorCode.HTTP_NOT_FOUND]: 404,
  [ErrorCode.FLOW_NOT_FOUND]: 404,
  [ErrorCode.RUN_NOT_FOUND]: 404,
  [ErrorCode.LOG_NOT_FOUND]: 404,
  [ErrorCode.HTTP_METHOD_NOT_ALLOWED]: 405,
  [ErrorCode.RUN_ALREADY_FINISHED]: 409,
  // An answer the run's wait does not take: it waits for nothing (or for something else), the
  // answer was given already, or it names another call.
  [ErrorCode.RUN_NOT_WAITING]: 409,
  [ErrorCode.WAIT_ALREADY_ANSWERED]: 409,
  [ErrorCode.WAIT_ANSWER_MISMATCH]: 409,
  // The answer came after the wait's deadline: the run ends blocked instead.
  [ErrorCode.WAIT_EXPIRED]: 409,
  // The request is well formed and the flow valid: it conflicts with the flow the cluster runs.
  [ErrorCode.FLOW_MISMATCH]: 409,
  [ErrorCode.HTTP_BODY_TOO_LARGE]: 413,
  [ErrorCode.FLOW_TOO_LARGE]: 413,
  [ErrorCode.HTTP_UNSUPPORTED_MEDIA_TYPE]: 415,
  // A stored flow file that is not JSON: the request is fine, the file is not.
  [ErrorCode.FLOW_INVALID_JSON]: 422,
  // The conversation's stored memory is past the limits: the request is fine, the stored data is not.
  [ErrorCode.MEMORY_RECORD_TOO_DEEP]: 422,
  [ErrorCode.MEMORY_RECORD_TOO_LARGE]: 422,
  [ErrorCode.EDITOR_NOT_BUILT]: 503,
  // The server lacks an optional package (pg, tsx) the flow needs: the request is fine.
  [ErrorCode.DEPENDENCY_MISSING]: 503,
  [ErrorCode.SERVER_CLOSING]: 503,
  [ErrorCode.TRANSPORT_CONNECT_FAILED]: 503,
  [ErrorCode.TRANSPORT_NO_RESPONDER]: 503,
  [ErrorCode.TRANSPORT_TIMEOUT]: 503,
  [ErrorCode.TRANSPORT_CLOSED]: 503,
  [ErrorCode.LOG_STORE_UNAVAILABLE]: 503,
  // redflow serve --node-red: what Node-RED's flows or its Admin API say.
  [ErrorCode.NODE_RED_TAB_NOT_FOUND]: 404,
  [ErrorCode.NODE_RED_ID_CONFLICT]: 409,
  [ErrorCode.NODE_RED_FLOWS_CHANGED]: 409,
  [ErrorCode.NODE_RED_AGENT_NOT_RUNNING]: 409,
  [ErrorCode.NODE_RED_SECRET_IN_FLOW]: 422,
  // Two nodes with one id: a file could hold them, Node-RED cannot.
  [ErrorCode.DUPLICATE_NODE_ID]: 422,
  [ErrorCode.NODE_RED_FLOWS_INVALID]: 502,
  // The client's request is fine: the server's own access to Node-RED failed.
  [ErrorCode.NODE_RED_UNAUTHORIZED]: 502,
  [ErrorCode.NODE_RED_UNREACHABLE]: 502,
};

/** The HTTP status an error code is answered with (500 for a code the API does not expect). */
export function httpStatusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code] ?? 500;
}

/** One wrong field of a request body: its JSON pointer and what is wrong with it. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/**
 * An error of the API, with what a client needs to fix its request: the flow diagnostics of a
 * flow that does not validate, or the headers a status calls for (`Allow` on a 405).
 *
 * @example
 * ```ts
 * throw new ApiError(errorInfo(ErrorCode.RUN_NOT_FOUND, `no run ${traceId}`));
 * ```
 */
export class ApiError extends RedflowError {
  constructor(
    info: ErrorInfo,
    readonly extra: {
      readonly diagnostics?: readonly FlowDiagnostic[];
      readonly headers?: Readonly<Record<string, string>>;
      readonly fields?: readonly FieldError[];
    } = {},
  ) {
    super(info);
  }
}

/** A thrown value as the answer the API sends: status, body and headers. */
export interface ErrorAnswer {
  readonly status: number;
  readonly body: ApiErrorBody;
  readonly headers: Readonly<Record<string, string>>;
  /** True when it was not a {@link RedflowError}: a bug, to be logged on the server (and only there). */
  readonly unexpected: boolean;
  /**
   * True when the body leaves out part of the error (a path on the server's disk, a server's
   * address: see `publicText`): the full error is for the server's log.
   */
  readonly withheld: boolean;
}

/**
 * Turns anything thrown by a route into its answer. Only Redflow's own errors (code, message,
 * hint) reach the client, without the server's absolute paths and the addresses of the servers
 * it talks to (`publicErrorInfo`); anything else becomes a bare 500, since its message or stack
 * may reveal the server's internals.
 */
export function errorAnswer(thrown: unknown): ErrorAnswer {
  if (thrown instanceof FlowInvalidError) {
    // A flow that does not validate is the request's fault, whatever its first diagnostic says.
    const shown = publicErrorInfo(thrown.toInfo());
    return {
      status: 400,
      body: { error: shown.info, diagnostics: [...thrown.errors, ...thrown.warnings] },
      headers: {},
      unexpected: false,
      withheld: shown.withheld,
    };
  }
  if (thrown instanceof RedflowError) {
    const extra = thrown instanceof ApiError ? thrown.extra : {};
    const shown = publicErrorInfo(thrown.toInfo());
    return {
      status: httpStatusOf(thrown.code),
      body: {
        error: shown.info,
        ...(extra.diagnostics && { diagnostics: extra.diagnostics }),
        ...(extra.fields && { fields: extra.fields }),
      },
      headers: extra.headers ?? {},
      unexpected: false,
      withheld: shown.withheld,
    };
  }
  return {
    status: 500,
    body: { error: errorInfo(ErrorCode.HTTP_INTERNAL_ERROR, 'the server failed to answer this request', { hint: 'see the server\'s log; this is a bug in redflow' }) },
    headers: {},
    unexpected: true,
    withheld: false,
  };
}
