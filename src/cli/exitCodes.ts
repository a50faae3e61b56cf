import type { RunOutcome } from '../contracts/schema-types.js';
import type { ErrorCode } from '../errors.js';
import { errorKindOf, type ErrorKind } from '../errorKinds.js';

/**
 * The `redflow` command's exit codes (sysexits-style where one fits), defined once and listed in
 * docs/cli.md.
 */
export const ExitCode = {
  /** The run ended done (final answer) or done_partial (a stop condition). */
  Ok: 0,
  /** The run ended blocked: an invalid answer, a model error, a failed memory save, a timeout, an abort. */
  RunFailed: 1,
  /** The run ended escalated: no final answer within the iteration limit, or a question to a person nobody answered. */
  Escalated: 2,
  /**
   * The run waits for an answer from outside (an approval, a client tool's result, a person's
   * answer to the model's question): it is parked in its log, and `redflow
   * approve|deny|tool-result|answer` answers it.
   */
  Waiting: 3,
  /** The run ended delegate: the model handed its task to another agent (the handoff is in the outcome). */
  Delegated: 4,
  /** The command line is wrong. */
  Usage: 64,
  /** A flow, an input or a log is invalid. */
  DataError: 65,
  /** A file is missing. */
  NoInput: 66,
  /** A service the command needs (NATS, JetStream) cannot be reached. */
  Unavailable: 69,
  /** Something failed that is not the user's doing. */
  Internal: 70,
  /** Ctrl-C: the command stopped following a run that goes on (distributed mode). */
  Interrupted: 130,
} as const;

/** One of {@link ExitCode}'s values. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit code an outcome maps to (see docs/cli.md). */
export function exitCodeOf(outcome: RunOutcome): ExitCode {
  if (outcome.status === 'escalate') return ExitCode.Escalated;
  if (outcome.status === 'delegate') return ExitCode.Delegated;
  if (outcome.status === 'blocked') return ExitCode.RunFailed;
  return ExitCode.Ok;
}

/** The exit code of each kind of error (see `src/errorKinds.ts`). */
const EXIT_CODE_OF_KIND: { readonly [K in ErrorKind]: ExitCode } = {
  invalid_input: ExitCode.DataError,
  invalid_data: ExitCode.DataError,
  corrupt: ExitCode.DataError,
  conflict: ExitCode.DataError,
  too_large: ExitCode.DataError,
  // A missing or wrong --token is the command line's to fix.
  usage: ExitCode.Usage,
  unauthorized: ExitCode.Usage,
  forbidden: ExitCode.Usage,
  not_found: ExitCode.NoInput,
  missing_file: ExitCode.NoInput,
  unavailable: ExitCode.Unavailable,
  internal: ExitCode.Internal,
};

/**
 * The exit code of a command that failed with a Redflow error of this code.
 *
 * @example
 * ```ts
 * exitCodeOfError(ErrorCode.FLOW_NOT_FOUND); // ExitCode.NoInput (66)
 * ```
 */
export function exitCodeOfError(code: ErrorCode): ExitCode {
  return EXIT_CODE_OF_KIND[errorKindOf(code)];
}
