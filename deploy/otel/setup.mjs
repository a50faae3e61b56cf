// An OpenTelemetry SDK for `redflow` processes: spans and metrics over OTLP/HTTP (JSON) to the
// collector or Jaeger at $OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), named
// $OTEL_SERVICE_NAME (default "redflow"). Load it before Redflow and turn Redflow's telemetry on:
//
//   npm install @opentelemetry/api @opentelemetry/sdk-trace-base @opentelemetry/sdk-metrics \
//     @opentelemetry/resources @opentelemetry/exporter-trace-otlp-http @opentelemetry/exporter-metrics-otlp-http
//   REDFLOW_OTEL=1 NODE_OPTIONS="--import ./setup.mjs" redflow worker flow.json --role core
//
// Redflow flushes both providers before its command exits.
import { metrics, trace } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

const resource = resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'redflow' });

trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    resource,
    // The exporters read OTEL_EXPORTER_OTLP_ENDPOINT (and the other OTEL_EXPORTER_OTLP_* settings),
    // the batch processor OTEL_BSP_SCHEDULE_DELAY and its other OTEL_BSP_* settings.
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  }),
);
// OTEL_METRICS_EXPORTER=none leaves metrics out (Jaeger, for one, keeps traces only).
if (process.env.OTEL_METRICS_EXPORTER !== 'none') {
  metrics.setGlobalMeterProvider(
    new MeterProvider({
      resource,
      readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), exportIntervalMillis: Number(process.env.OTEL_METRIC_EXPORT_INTERVAL) || 60_000 })],
    }),
  );
}
