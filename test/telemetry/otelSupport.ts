import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type DataPoint, type MetricData } from '@opentelemetry/sdk-metrics';
import { disableTelemetry, enableTelemetry } from '../../src/telemetry/enableTelemetry.js';

/** An OpenTelemetry SDK in memory: what Redflow's spans and metrics look like to an exporter. */
export interface MemoryOtel {
  readonly tracerProvider: BasicTracerProvider;
  readonly spans: () => ReadableSpan[];
  /** Collects the metrics now: the last export of each. */
  metrics(): Promise<MetricData[]>;
  /** Forgets the spans recorded so far. */
  reset(): void;
  shutdown(): Promise<void>;
}

/** Turns Redflow's telemetry on with in-memory exporters for spans and metrics. */
export async function enableMemoryOtel(options: { captureContent?: boolean } = {}): Promise<MemoryOtel> {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  await enableTelemetry({ tracerProvider, meterProvider, captureContent: options.captureContent === true });
  return {
    tracerProvider,
    spans: () => spanExporter.getFinishedSpans(),
    async metrics() {
      metricExporter.reset();
      await reader.forceFlush();
      return metricExporter.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
    },
    reset: () => spanExporter.reset(),
    async shutdown() {
      disableTelemetry();
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** The data points of metric `name`. */
export function pointsOf(metrics: readonly MetricData[], name: string): DataPoint<unknown>[] {
  return metrics.filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints as DataPoint<unknown>[]);
}

/** The one span called `name`; fails the test when there is not exactly one. */
export function onlySpan(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) throw new Error(`expected one span "${name}", found ${found.length} among ${spans.map((span) => span.name).join(', ')}`);
  return found[0] as ReadableSpan;
}
