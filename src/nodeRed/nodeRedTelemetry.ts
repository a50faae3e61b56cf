import { ErrorCode, toErrorInfo } from '../errors.js';
import { enableTelemetryFromEnvironment } from '../telemetry/enableTelemetry.js';
import type { NodeRedApi } from './nodeRedApi.js';

/** Asked once per process: every agent node of a Node-RED shares its telemetry, as OpenTelemetry's providers are process-wide. */
let asked: Promise<void> | undefined;

/**
 * Turns Redflow's telemetry on in this Node-RED when its environment asks for it, as every
 * `redflow` command does: `REDFLOW_OTEL=1` (content capture with
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`), spans and metrics going to the
 * OpenTelemetry SDK the process registered (`NODE_OPTIONS="--import <sdk setup>"`). Never rejects:
 * a telemetry that cannot start (no `@opentelemetry/api`, a wrong `REDFLOW_OTEL`) is a warning in
 * Node-RED's log, and the agents run without it.
 */
export function telemetryFromEnvironment(RED: NodeRedApi): Promise<void> {
  asked ??= enableTelemetryFromEnvironment(process.env, (line) => RED.log?.warn(`redflow: ${line}`)).then(
    (on) => {
      if (on) RED.log?.info('redflow: telemetry on (REDFLOW_OTEL): runs, model and tool calls are traced');
    },
    (error: unknown) => {
      const info = toErrorInfo(error, ErrorCode.CLI_USAGE);
      RED.log?.warn(`redflow: telemetry stays off: ${info.code}: ${info.message}${info.hint === undefined ? '' : ` (${info.hint})`}`);
    },
  );
  return asked;
}
