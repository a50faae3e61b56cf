import { describe, expect, it } from 'vitest';
import { exitCodeOfError, ExitCode } from '../../src/cli/exitCodes.js';
import { ERROR_KINDS, errorKindOf, httpStatusOf } from '../../src/errorKinds.js';
import { ErrorCode } from '../../src/errors.js';

describe('the error-kind table', () => {
  it('gives every code a kind, and nothing that is not a code', () => {
    expect(Object.keys(ERROR_KINDS).sort()).toEqual(Object.values(ErrorCode).sort());
    for (const code of Object.values(ErrorCode)) expect(typeof ERROR_KINDS[code], code).toBe('string');
  });

  it('derives the HTTP status and the exit code of known codes from their kind', () => {
    const expected: [ErrorCode, number, ExitCode][] = [
      [ErrorCode.RUN_INPUT_INVALID, 400, ExitCode.DataError],
      [ErrorCode.HTTP_UNAUTHORIZED, 401, ExitCode.Usage],
      [ErrorCode.RUN_NOT_FOUND, 404, ExitCode.NoInput],
      [ErrorCode.ANSWERS_FILE_NOT_FOUND, 400, ExitCode.NoInput],
      [ErrorCode.HTTP_METHOD_NOT_ALLOWED, 405, ExitCode.DataError],
      [ErrorCode.RUN_NOT_WAITING, 409, ExitCode.DataError],
      [ErrorCode.HTTP_BODY_TOO_LARGE, 413, ExitCode.DataError],
      [ErrorCode.FLOW_INVALID_JSON, 422, ExitCode.DataError],
      [ErrorCode.NODE_RED_UNAUTHORIZED, 502, ExitCode.Usage],
      [ErrorCode.NODE_RED_UNREACHABLE, 502, ExitCode.Unavailable],
      [ErrorCode.TRANSPORT_CONNECT_FAILED, 503, ExitCode.Unavailable],
      [ErrorCode.MODEL_TIMEOUT, 500, ExitCode.Internal],
      // Where the old tables disagreed: one answer now, whoever asks.
      [ErrorCode.NODE_RED_AGENT_NOT_RUNNING, 409, ExitCode.DataError],
      [ErrorCode.NO_MODEL, 422, ExitCode.DataError],
      [ErrorCode.NODE_RED_TAB_NOT_FOUND, 422, ExitCode.DataError],
      [ErrorCode.TRANSPORT_TIMEOUT, 503, ExitCode.Unavailable],
      // A damaged log: the CLI's user gave it, but a server's own store failed.
      [ErrorCode.LOG_RECORD_CORRUPT, 500, ExitCode.DataError],
      [ErrorCode.RUN_TRACE_ID_TAKEN, 409, ExitCode.DataError],
    ];
    for (const [code, status, exit] of expected) {
      expect([code, httpStatusOf(code), exitCodeOfError(code)]).toEqual([code, status, exit]);
    }
  });

  it('treats a code it does not know (one from a newer peer) as internal', () => {
    const unknown = 'SOME_FUTURE_CODE' as ErrorCode;
    expect([errorKindOf(unknown), httpStatusOf(unknown), exitCodeOfError(unknown)]).toEqual(['internal', 500, ExitCode.Internal]);
  });
});
