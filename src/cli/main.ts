import { ErrorCode, RedflowError } from '../errors.js';
import { FlowInvalidError } from '../flows/loadValidFlow.js';
import { formatDiagnostics } from '../flows/formatDiagnostics.js';
import { isJetStreamNotEnabled, jetStreamNotEnabledError } from '../nats/jetStreamNotEnabled.js';
import { commands } from './commands.js';
import { ExitCode } from './exitCodes.js';
import { line, styles, terminalOutput, type Output } from './output.js';
import { enableTelemetryFromEnvironment, flushTelemetry } from '../telemetry/enableTelemetry.js';
import { redflowVersion as version } from '../version.js';


const mainUsage = () => `redflow ${version}: ReAct agents as flow graphs, run by an explicit statechart with a replayable event log

usage: redflow <command> [options]

commands:
${commands.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`).join('\n')}

Run \`redflow <command> --help\` for a command's options.`;

/** Exit codes of errors that are the input's fault rather than Redflow's. */
const dataErrors: ReadonlySet<string> = new Set([
  ErrorCode.RUN_INPUT_INVALID,
  ErrorCode.RUN_INPUT_TOO_DEEP,
  ErrorCode.RUN_INPUT_TOO_LARGE,
  // The input (with the system prompt) is longer than the model's window (contextTokens).
  ErrorCode.CONTEXT_BUDGET_EXCEEDED,
  ErrorCode.RUN_TRACE_ID_TAKEN,
  // An agent definition module that is not one, or inputs it does not take.
  ErrorCode.AGENT_DEFINITION_INVALID,
  ErrorCode.AGENT_INPUT_INVALID,
  ErrorCode.TEMPLATE_VARIABLE_MISSING,
  ErrorCode.MEMORY_RECORD_TOO_DEEP,
  ErrorCode.MEMORY_RECORD_TOO_LARGE,
  ErrorCode.FLOW_FILE_OUTSIDE_ROOTS,
  ErrorCode.MODEL_CONFIG_INVALID,
  ErrorCode.MODEL_KEY_MISSING,
  ErrorCode.TOOL_MODULE_INVALID,
  ErrorCode.TOOL_CONFIG_INVALID,
  ErrorCode.MEMORY_KEY_INVALID,
  // A conversation's memory that cannot be read (a damaged file) when the run loads it.
  ErrorCode.MEMORY_FAILED,
  // `run --log` given a log torn by a crash: `redflow resume` repairs and continues it.
  ErrorCode.LOG_RECORD_TORN,
  ErrorCode.LOG_RECORD_CORRUPT,
  ErrorCode.LOG_SEQUENCE_GAP,
  ErrorCode.LOG_TRACE_MISMATCH,
  ErrorCode.LOG_PATH_INVALID,
  ErrorCode.LOG_EMPTY,
  ErrorCode.LOG_CONCURRENT_WRITER,
  ErrorCode.FLOW_INVALID_JSON,
  ErrorCode.FLOW_TOO_LARGE,
  ErrorCode.FLOW_MISMATCH,
  ErrorCode.NODE_CONFIG_INVALID,
  // An answer (approve, deny, tool-result) the run's wait does not take.
  ErrorCode.RUN_NOT_WAITING,
  ErrorCode.WAIT_ALREADY_ANSWERED,
  ErrorCode.WAIT_ANSWER_MISMATCH,
  ErrorCode.RUN_ALREADY_FINISHED,
  // A server's answer to a request it refused (--server).
  ErrorCode.HTTP_BODY_INVALID,
  // redflow convert: a file that is not a flow, or not Node-RED flows, or cannot be one in Node-RED.
  ErrorCode.FLOW_SCHEMA_MISMATCH,
  ErrorCode.DUPLICATE_NODE_ID,
  ErrorCode.NODE_RED_FLOWS_INVALID,
  ErrorCode.NODE_RED_TAB_NOT_FOUND,
  ErrorCode.NODE_RED_SECRET_IN_FLOW,
  ErrorCode.NODE_RED_ID_CONFLICT,
]);
const unavailable: ReadonlySet<string> = new Set([
  ErrorCode.TRANSPORT_CONNECT_FAILED,
  // Nothing serves the subject: a worker the command needs is not running.
  ErrorCode.TRANSPORT_NO_RESPONDER,
  ErrorCode.LOG_STORE_UNAVAILABLE,
  ErrorCode.JETSTREAM_NOT_ENABLED,
  ErrorCode.INSPECT_UNAVAILABLE,
  // An optional package (pg, tsx) the flow needs is not installed.
  ErrorCode.DEPENDENCY_MISSING,
  // redflow serve --node-red: Node-RED's Admin API cannot be reached.
  ErrorCode.NODE_RED_UNREACHABLE,
]);
const missing: ReadonlySet<string> = new Set([
  ErrorCode.FLOW_NOT_FOUND,
  ErrorCode.LOG_NOT_FOUND,
  ErrorCode.INPUT_FILE_NOT_FOUND,
  ErrorCode.ANSWERS_FILE_NOT_FOUND,
  // No such run on the server (--server).
  ErrorCode.RUN_NOT_FOUND,
]);

/**
 * The `redflow` command: runs `argv` (without node and the script) and returns the exit code.
 * Errors are printed with their code and a hint, never as a stack trace.
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
  const command = commands.find((c) => c.name === name);
  const s = styles(output.color);
  if (!command) {
    line(output.err, s.red(`unknown command "${name}"`));
    line(output.err, `commands: ${commands.map((c) => c.name).join(', ')}; see redflow --help`);
    return ExitCode.Usage;
  }
  try {
    // REDFLOW_OTEL=1: spans and metrics go to the OpenTelemetry SDK the operator set up (--import).
    await enableTelemetryFromEnvironment(process.env, (warning) => line(output.err, s.yellow(warning)));
    return await command.run(args, output);
  } catch (thrown) {
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
      // A missing or wrong --token is the command line's to fix.
      if (error.code === ErrorCode.CLI_USAGE || error.code === ErrorCode.HTTP_UNAUTHORIZED || error.code === ErrorCode.NODE_RED_UNAUTHORIZED) return ExitCode.Usage;
      if (missing.has(error.code)) return ExitCode.NoInput;
      if (dataErrors.has(error.code)) return ExitCode.DataError;
      if (unavailable.has(error.code)) return ExitCode.Unavailable;
      return ExitCode.Internal;
    }
    line(output.err, s.red(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
    line(output.err, 'this is a bug in redflow; please report it with the command you ran');
    return ExitCode.Internal;
  } finally {
    // What the SDK still holds is exported before the process exits.
    await flushTelemetry();
  }
}
