import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { importOptional } from '../optionalDependency.js';
import { setActiveTelemetry } from './activeTelemetry.js';

/** A tracer provider as the OpenTelemetry API defines one (the SDK's `BasicTracerProvider`, `NodeTracerProvider`). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): unknown;
}

/** A meter provider as the OpenTelemetry API defines one (the SDK's `MeterProvider`). */
export interface MeterProviderLike {
  getMeter(name: string, version?: string): unknown;
}

/**
 * Options of {@link enableTelemetry}.
 *
 * @example
 * ```ts
 * await enableTelemetry({ captureContent: false } satisfies TelemetryOptions);
 * ```
 */
export interface TelemetryOptions {
  /** Where spans go. Default: the process's global tracer provider, the one the OpenTelemetry SDK registered. */
  readonly tracerProvider?: TracerProviderLike;
  /** Where metrics go. Default: the process's global meter provider. */
  readonly meterProvider?: MeterProviderLike;
  /**
   * Also record the content of calls on spans: the messages sent to the model and its answer,
   * each tool call's input and output, error messages. Redacted of every secret the process
   * knows. Default false: spans then carry names, ids, counts, durations and error codes only.
   */
  readonly captureContent?: boolean;
}

/** The providers flushed by {@link flushTelemetry}, once telemetry is on. */
let flushable: (() => readonly unknown[]) | undefined;

/**
 * Turns on telemetry for this process through `@opentelemetry/api` (an optional peer
 * dependency, loaded here and nowhere before): every run this process works on gets an
 * `invoke_agent` span per stretch, every model call it serves a `chat <model>` span and every
 * tool call an `execute_tool <name>` span, in the run's one trace, plus Redflow's metrics.
 * Redflow brings no SDK: register one (a tracer provider with an exporter) in the process, or
 * pass providers here.
 *
 * @throws RedflowError `DEPENDENCY_MISSING` when `@opentelemetry/api` is not installed.
 * @example
 * ```ts
 * await enableTelemetry({ tracerProvider, meterProvider });
 * const run = await runFlowFile({ flowPath: 'flow.json', input: 'Where is order A-1001?' });
 * ```
 */
export async function enableTelemetry(options: TelemetryOptions = {}): Promise<void> {
  const api = await importOptional('@opentelemetry/api', 'telemetry', () => import('@opentelemetry/api'));
  const { createOtelTelemetry } = await import('./otelTelemetry.js');
  type Given = Parameters<typeof createOtelTelemetry>[1];
  setActiveTelemetry(
    createOtelTelemetry(api, {
      tracerProvider: options.tracerProvider as NonNullable<Given>['tracerProvider'],
      meterProvider: options.meterProvider as NonNullable<Given>['meterProvider'],
      captureContent: options.captureContent === true,
    }),
  );
  flushable = () => {
    const tracer = options.tracerProvider ?? api.trace.getTracerProvider();
    // The global tracer provider is a proxy in front of the SDK's.
    const delegate = (tracer as { getDelegate?: () => unknown }).getDelegate?.() ?? tracer;
    return [delegate, options.meterProvider ?? api.metrics.getMeterProvider()];
  };
}

/**
 * Turns telemetry off: later runs and calls record nothing (spans already open still end).
 *
 * @example
 * ```ts
 * disableTelemetry(); // runs started from now on record no spans or metrics
 * ```
 */
export function disableTelemetry(): void {
  setActiveTelemetry(undefined);
  flushable = undefined;
}

/**
 * Hands what the providers hold to their exporters (`forceFlush`), waiting at most `timeoutMs`:
 * what a short-lived process does before it exits. Does nothing while telemetry is off.
 *
 * @example
 * ```ts
 * await flushTelemetry(2000); // before process.exit, so the last spans reach the collector
 * ```
 */
export async function flushTelemetry(timeoutMs = 5000): Promise<void> {
  if (flushable === undefined) return;
  const flushes = flushable().map((provider) => (provider as { forceFlush?: () => Promise<unknown> }).forceFlush?.call(provider)).filter((flush) => flush !== undefined);
  if (flushes.length === 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    timer.unref();
  });
  await Promise.race([Promise.allSettled(flushes), late]);
  clearTimeout(timer);
}

/**
 * Turns telemetry on when the environment asks for it: `REDFLOW_OTEL=1` (or `true`), with
 * content capture when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`. Returns whether
 * it did; `warn` hears when no OpenTelemetry SDK is registered, since nothing is exported then.
 *
 * @throws RedflowError `CLI_USAGE` for another value of `REDFLOW_OTEL`; `DEPENDENCY_MISSING`
 *   when `@opentelemetry/api` is not installed.
 */
export async function enableTelemetryFromEnvironment(env: Readonly<Record<string, string | undefined>>, warn: (line: string) => void): Promise<boolean> {
  const value = (env['REDFLOW_OTEL'] ?? '').trim().toLowerCase();
  if (value === '' || value === '0' || value === 'false') return false;
  if (value !== '1' && value !== 'true') {
    throw new RedflowError(errorInfo(ErrorCode.CLI_USAGE, `REDFLOW_OTEL is "${env['REDFLOW_OTEL']}"`, { hint: 'set REDFLOW_OTEL=1 to turn telemetry on, or leave it unset' }));
  }
  await enableTelemetry({ captureContent: env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT']?.trim().toLowerCase() === 'true' });
  const api = await import('@opentelemetry/api');
  // Without an SDK the global tracer makes spans with no valid ids: nothing would be exported.
  if (!api.isSpanContextValid(api.trace.getTracer('redflow').startSpan('redflow.sdk-check').spanContext())) {
    warn('REDFLOW_OTEL is set, but no OpenTelemetry SDK is registered in this process: nothing is exported (start node with --import <your SDK setup>; see docs/telemetry.md)');
  }
  return true;
}
