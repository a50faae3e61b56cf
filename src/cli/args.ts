import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { ExitCode } from './exitCodes.js';
import { line, type Output } from './output.js';

/** Parses a command's arguments (strict: unknown flags are usage errors); `--help`/`-h` always allowed. */
export function parse(
  args: readonly string[],
  options: NonNullable<ParseArgsConfig['options']>,
  usage: string,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const parsed = parseArgs({ args: [...args], options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
  } catch (error) {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, (error as Error).message, { hint: usage.split('\n')[0] }));
  }
}

/** A usage error with the command's usage line as the hint. */
export function usageError(message: string, usage: string): RedflowError {
  return new RedflowError(errorInfo(ErrorCode.CLI_USAGE, message, { hint: usage.split('\n')[0] }));
}

/** A whole number of milliseconds given by a flag, or a usage error. */
export function positiveInteger(value: string | undefined, flag: string, usage: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw usageError(`${flag} must be a positive whole number of milliseconds, not "${value}"`, usage);
  return n;
}

/** Prints a command's usage. */
export function help(output: Output, usage: string): ExitCode {
  line(output.out, usage);
  return ExitCode.Ok;
}


/**
 * The test-only fault hook: with `REDFLOW_CRASH_AFTER_EVENT=<seq>`, SIGKILL this process right
 * after event `seq` of a run is in the log (crash/resume tests kill at every event boundary).
 */
export function crashHook(): ((event: AgentEvent) => void) | undefined {
  const at = Number(process.env.REDFLOW_CRASH_AFTER_EVENT);
  if (!Number.isInteger(at) || at <= 0) return undefined;
  return (event) => {
    if (event.seq === at) process.kill(process.pid, 'SIGKILL');
  };
}
