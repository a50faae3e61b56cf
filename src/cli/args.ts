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
 * after event `seq` of the run is in the log (crash/resume tests kill at every event boundary);
 * with `<traceId>:<seq>`, after event `seq` of that run, which may be a subagent's run (the hook
 * for `subagents` runs takes only this form).
 */
export function crashHook(runs: 'run' | 'subagents' = 'run'): ((event: AgentEvent) => void) | undefined {
  const given = process.env.REDFLOW_CRASH_AFTER_EVENT ?? '';
  const split = given.lastIndexOf(':');
  const traceId = split < 0 ? undefined : given.slice(0, split);
  const at = Number(split < 0 ? given : given.slice(split + 1));
  if (!Number.isInteger(at) || at <= 0 || (traceId === undefined && runs === 'subagents')) return undefined;
  return (event) => {
    if (event.seq === at && (traceId === undefined || event.traceId === traceId)) process.kill(process.pid, 'SIGKILL');
  };
}
