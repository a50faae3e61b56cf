import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { INSTRUMENTATION_NAME } from './names.js';
import { createInstruments } from './otelInstruments.js';
import type { OtelApi, OtelParts } from './otelParts.js';
import { startModelCall, startToolCall } from './otelActorSpans.js';
import { startRunSpan } from './otelRunSpan.js';
import type { Telemetry } from './telemetry.js';
import { redflowVersion as version } from '../version.js';


/** Options of {@link createOtelTelemetry}. */
export interface OtelTelemetryOptions {
  /** Default: the process's global tracer provider (what the OpenTelemetry SDK registered). */
  readonly tracerProvider?: TracerProvider | undefined;
  /** Default: the process's global meter provider. */
  readonly meterProvider?: MeterProvider | undefined;
  /** Record prompts, answers, tool inputs and outputs on spans (redacted). Default false. */
  readonly captureContent?: boolean | undefined;
}

/**
 * Redflow's telemetry through the OpenTelemetry API `api` (handed in, so that only the caller
 * imports the optional package): spans `invoke_agent`, `chat <model>` and `execute_tool <name>`
 * following the GenAI semantic conventions, and Redflow's metrics.
 *
 * @example
 * ```ts
 * const telemetry = createOtelTelemetry(await import('@opentelemetry/api'), { captureContent: false });
 * ```
 */
export function createOtelTelemetry(api: OtelApi, options: OtelTelemetryOptions = {}): Telemetry {
  const tracerProvider = options.tracerProvider ?? api.trace.getTracerProvider();
  const meterProvider = options.meterProvider ?? api.metrics.getMeterProvider();
  const parts: OtelParts = {
    api,
    tracer: tracerProvider.getTracer(INSTRUMENTATION_NAME, version),
    instruments: createInstruments(meterProvider.getMeter(INSTRUMENTATION_NAME, version)),
    captureContent: options.captureContent === true,
  };
  return {
    startRun: (stretch) => startRunSpan(parts, stretch),
    modelCall: (call) => startModelCall(parts, call),
    toolCall: (call) => startToolCall(parts, call),
  };
}
