import { ApiError, ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { httpStatusOf } from '../errorKinds.js';
import { FlowInvalidError } from '../flows/loadValidFlow.js';
import type { ApiErrorBody } from './apiTypes.js';
import { publicErrorInfo } from './publicText.js';

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
