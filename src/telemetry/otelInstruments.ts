import type { Attributes, Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';
import { TelemetryAttribute, TelemetryMetric } from './names.js';

/** Seconds: the GenAI conventions' advised buckets for operation durations. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** Tokens: the GenAI conventions' advised buckets for token counts. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** Seconds: runs last from a second to a day (a run that waits for a person). */
const RUN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600, 14400, 86400];

/** The metrics Redflow records, made once per meter. */
export interface Instruments {
  readonly runsStarted: Counter;
  readonly runsResumed: Counter;
  readonly runsEnded: Counter;
  readonly runsActive: UpDownCounter;
  readonly iterations: Counter;
  readonly runDuration: Histogram;
  readonly tokenUsage: Histogram;
  readonly operationDuration: Histogram;
  readonly toolDuration: Histogram;
  /** Counts a model or tool call this process serves while it runs: returns what ends it. */
  callStarted(attributes: Attributes): () => void;
}

/**
 * Creates the instruments on `meter`. The calls being served are counted per set of attributes
 * and observed as the gauge `redflow.actor.in_flight` (a worker's queue depth: what it has taken
 * from its queue groups and not answered yet).
 */
export function createInstruments(meter: Meter): Instruments {
  const inFlight = new Map<string, { attributes: Attributes; count: number }>();
  meter
    .createObservableGauge(TelemetryMetric.ActorInFlight, { description: 'Model and tool calls this process is serving', unit: '{call}' })
    .addCallback((result) => {
      for (const { attributes, count } of inFlight.values()) result.observe(count, attributes);
    });
  return {
    runsStarted: meter.createCounter(TelemetryMetric.RunsStarted, { description: 'Runs started', unit: '{run}' }),
    runsResumed: meter.createCounter(TelemetryMetric.RunsResumed, { description: 'Runs continued from their log', unit: '{run}' }),
    runsEnded: meter.createCounter(TelemetryMetric.RunsEnded, { description: 'Runs ended, by outcome', unit: '{run}' }),
    runsActive: meter.createUpDownCounter(TelemetryMetric.RunsActive, { description: 'Runs this process is working on', unit: '{run}' }),
    iterations: meter.createCounter(TelemetryMetric.Iterations, { description: 'Iterations begun (one model request each)', unit: '{iteration}' }),
    runDuration: meter.createHistogram(TelemetryMetric.RunDuration, {
      description: "From a run's start to its ending",
      unit: 's',
      advice: { explicitBucketBoundaries: RUN_BUCKETS },
    }),
    tokenUsage: meter.createHistogram(TelemetryMetric.TokenUsage, {
      description: 'Tokens used per model call',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
    operationDuration: meter.createHistogram(TelemetryMetric.OperationDuration, {
      description: 'Duration of model calls',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    toolDuration: meter.createHistogram(TelemetryMetric.ToolDuration, {
      description: 'Duration of tool calls',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    callStarted(attributes) {
      const key = `${String(attributes[TelemetryAttribute.RedflowActor])}\u0000${String(attributes[TelemetryAttribute.ToolName] ?? '')}`;
      let entry = inFlight.get(key);
      if (!entry) inFlight.set(key, (entry = { attributes, count: 0 }));
      entry.count += 1;
      const counted = entry;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        counted.count -= 1;
      };
    },
  };
}
