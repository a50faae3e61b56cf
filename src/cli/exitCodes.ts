import type { RunOutcome } from '../contracts/schema-types.js';

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
