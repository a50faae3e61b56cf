import { RedflowError } from '../errors.js';
import { commandTable } from './commandTable.js';
import { ExitCode, exitCodeOfError } from './exitCodes.js';
import { line, styles, terminalOutput, type Output } from './output.js';
import { redflowVersion as version } from '../version.js';

// Only what `--version`, `--help` and an unknown command need is imported here: a command's
// module, telemetry and the error formatting of flows and JetStream load when a command runs.

const mainUsage = () => `redflow ${version}: ReAct agents as flow graphs, run by an explicit statechart with a replayable event log

usage: redflow <command> [options]

commands:
${commandTable.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`).join('\n')}

Run \`redflow <command> --help\` for a command's options.`;

/**
 * The `redflow` command: runs `argv` (without node and the script) and returns the exit code.
 * Errors are printed with their code and a hint, never as a stack trace.
 *
 * @example
 * ```ts
 * process.exitCode = await main(['replay', 'run.jsonl']);
 * ```
 */
export async function main(argv: readonly string[], output: Output = terminalOutput()): Promise<ExitCode> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    line(output.out, mainUsage());
    return name === undefined ? ExitCode.Usage : ExitCode.Ok;
  }
  if (name === '--version' || name === '-v') {
    line(output.out, version);
    return ExitCode.Ok;
  }
  const entry = commandTable.find((c) => c.name === name);
  const s = styles(output.color);
  if (!entry) {
    line(output.err, s.red(`unknown command "${name}"`));
    line(output.err, `commands: ${commandTable.map((c) => c.name).join(', ')}; see redflow --help`);
    return ExitCode.Usage;
  }
  const { enableTelemetryFromEnvironment, flushTelemetry } = await import('../telemetry/enableTelemetry.js');
  try {
    const command = await entry.load();
    // REDFLOW_OTEL=1: spans and metrics go to the OpenTelemetry SDK the operator set up (--import).
    await enableTelemetryFromEnvironment(process.env, (warning) => line(output.err, s.yellow(warning)));
    return await command.run(args, output);
  } catch (thrown) {
    return await reportFailure(thrown, output);
  } finally {
    // What the SDK still holds is exported before the process exits.
    await flushTelemetry();
  }
}

/** Prints what went wrong with its code and hint (a stack trace only for a bug) and returns the exit code. */
async function reportFailure(thrown: unknown, output: Output): Promise<ExitCode> {
  const s = styles(output.color);
  const [{ isJetStreamNotEnabled, jetStreamNotEnabledError }, { FlowInvalidError }, { formatDiagnostics }] = await Promise.all([
    import('../nats/jetStreamNotEnabled.js'),
    import('../flows/loadValidFlow.js'),
    import('../flows/formatDiagnostics.js'),
  ]);
  // Wherever it was found missing (a bucket, the log, a lease), JetStream is the one thing to fix.
  const error = isJetStreamNotEnabled(thrown) ? jetStreamNotEnabledError(thrown) : thrown;
  if (error instanceof FlowInvalidError) {
    line(output.err, formatDiagnostics([...error.errors, ...error.warnings]));
    line(output.err, s.red(error.message));
    return ExitCode.DataError;
  }
  if (error instanceof RedflowError) {
    line(output.err, s.red(`error ${error.code}: ${error.message}`));
    if (error.hint) line(output.err, `hint: ${error.hint}`);
    return exitCodeOfError(error.code);
  }
  line(output.err, s.red(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
  line(output.err, 'this is a bug in redflow; please report it with the command you ran');
  return ExitCode.Internal;
}
