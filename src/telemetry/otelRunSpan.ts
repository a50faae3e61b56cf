import type { Attributes, Link } from '@opentelemetry/api';
import type { Headers, Transport } from '../actors/transport.js';
import { ErrorCode } from '../errors.js';
import type { AgentEvent } from '../events/eventTypes.js';
import { GenAiOperation, TelemetryAttribute } from './names.js';
import { recordFailure, remoteContext, type OtelParts } from './otelParts.js';
import type { RunStretch, RunTelemetry } from './telemetry.js';
import { TRACEPARENT_HEADER, formatTraceparent, parseTraceparent, runRootOf, type TraceParent } from './traceContext.js';

/**
 * The `invoke_agent` span of one stretch of a run, drawn from the run's events as they reach the
 * log: each event is a span event (its type, seq and iteration, the tool's name and whether its
 * call succeeded; never an input or output), the ending sets the outcome and, for `run.failed`,
 * the error. The span is a child of the run's logical root (see `otelTraceIdOf`), so every
 * stretch of a run, in whatever process, is in the run's one trace; a span active where the run
 * was started (a caller's request, a tool that starts a run) is linked. A subagent's run is part
 * of its caller's trace instead: its stretches are children of the call's span, which its log
 * names ({@link stretchParent}).
 */
export function startRunSpan(parts: OtelParts, stretch: RunStretch): RunTelemetry {
  const { api, tracer, instruments } = parts;
  const caller = api.trace.getSpan(api.context.active())?.spanContext();
  const links: Link[] = caller !== undefined && api.isSpanContextValid(caller) ? [{ context: caller }] : [];
  const agent: Attributes = stretch.flowId === undefined ? {} : { [TelemetryAttribute.AgentName]: stretch.flowId };
  const span = tracer.startSpan(
    stretch.flowId === undefined ? GenAiOperation.InvokeAgent : `${GenAiOperation.InvokeAgent} ${stretch.flowId}`,
    {
      kind: api.SpanKind.INTERNAL,
      links,
      attributes: {
        [TelemetryAttribute.OperationName]: GenAiOperation.InvokeAgent,
        ...agent,
        ...(stretch.conversationId !== undefined && { [TelemetryAttribute.ConversationId]: stretch.conversationId }),
        [TelemetryAttribute.RedflowTraceId]: stretch.traceId,
        [TelemetryAttribute.RedflowResumed]: stretch.resumed,
        ...(stretch.parent !== undefined && { [TelemetryAttribute.RedflowParentTraceId]: stretch.parent.traceId }),
      },
    },
    remoteContext(api, stretchParent(stretch)),
  );
  const headers: Headers = { [TRACEPARENT_HEADER]: formatTraceparent(span.spanContext()) };
  instruments.runsActive.add(1, agent);
  let inputTokens = 0;
  let outputTokens = 0;
  let usageSeen = false;
  let costUsd: number | undefined;
  let estimated = false;
  let over = false;

  const ending = (event: AgentEvent & { type: 'run.completed' | 'run.failed' }) => {
    const { outcome } = event.data;
    const byOutcome = { ...agent, [TelemetryAttribute.RedflowOutcomeStatus]: outcome.status, [TelemetryAttribute.RedflowOutcomeReason]: outcome.reason };
    span.setAttributes(byOutcome);
    instruments.runsEnded.add(1, byOutcome);
    const seconds = (Date.parse(event.time) - Date.parse(stretch.startedAt)) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) instruments.runDuration.record(seconds, byOutcome);
    if (event.type === 'run.failed') recordFailure(parts, span, outcome.error ?? { code: outcome.reason });
  };

  return {
    onEvent(event) {
      if (over) return;
      span.addEvent(event.type, eventAttributes(event));
      switch (event.type) {
        case 'run.started':
          instruments.runsStarted.add(1, agent);
          break;
        case 'run.resumed':
          instruments.runsResumed.add(1, agent);
          break;
        case 'model.requested':
          instruments.iterations.add(1, agent);
          break;
        case 'model.answered':
        case 'verification.completed':
          if (event.data.usage !== undefined) {
            usageSeen = true;
            inputTokens += event.data.usage.promptTokens;
            outputTokens += event.data.usage.completionTokens;
            if (event.data.usage.costUsd !== undefined) costUsd = (costUsd ?? 0) + event.data.usage.costUsd;
            if (event.data.usage.estimated === true) estimated = true;
          }
          break;
        case 'run.completed':
        case 'run.failed':
          ending(event);
          break;
        default:
          break;
      }
    },
    carry: (transport) => carrying(transport, headers),
    end(error) {
      if (over) return;
      over = true;
      instruments.runsActive.add(-1, agent);
      if (usageSeen) span.setAttributes({ [TelemetryAttribute.UsageInputTokens]: inputTokens, [TelemetryAttribute.UsageOutputTokens]: outputTokens });
      if (costUsd !== undefined) span.setAttribute(TelemetryAttribute.RedflowUsageCostUsd, costUsd);
      if (estimated) span.setAttribute(TelemetryAttribute.RedflowUsageEstimated, true);
      if (error !== undefined) {
        const code = (error as { code?: unknown } | null)?.code;
        if (code === ErrorCode.RUN_WAITING) span.setAttribute(TelemetryAttribute.RedflowLeft, 'waiting');
        else if (code === ErrorCode.RUN_STOPPED) span.setAttribute(TelemetryAttribute.RedflowLeft, 'stopped');
        // Anything else (a log that failed, a bug) ended the stretch without an outcome.
        else recordFailure(parts, span, error);
      }
      span.end();
    },
  };
}

/**
 * The span a stretch hangs below, the same for every stretch of the run (each reads it from the
 * run's `run.started`): for a subagent's run, the span of the call that started it (its
 * `execute_tool` span, or the calling run's when the tool's process had telemetry off), or the
 * calling run's root when the call recorded no context; for any other run, its own root.
 */
export function stretchParent(stretch: Pick<RunStretch, 'traceId' | 'parent'>): TraceParent {
  if (stretch.parent === undefined) return runRootOf(stretch.traceId);
  return parseTraceparent(stretch.parent.traceparent) ?? runRootOf(stretch.parent.traceId);
}

/** What a span event says of a logged event: never its content. */
function eventAttributes(event: AgentEvent): Attributes {
  const attributes: Attributes = { [TelemetryAttribute.RedflowSeq]: event.seq, [TelemetryAttribute.RedflowIteration]: event.iteration };
  const data = event.data as { tool?: unknown; idempotencyKey?: unknown; ok?: unknown; error?: { code?: unknown } };
  if (typeof data.tool === 'string') attributes[TelemetryAttribute.ToolName] = data.tool;
  if (typeof data.idempotencyKey === 'string') attributes[TelemetryAttribute.ToolCallId] = data.idempotencyKey;
  if (typeof data.ok === 'boolean') attributes[TelemetryAttribute.RedflowToolOk] = data.ok;
  if (typeof data.error?.code === 'string') attributes[TelemetryAttribute.ErrorType] = data.error.code;
  if (event.type === 'model.answered' && event.data.usage?.costUsd !== undefined) attributes[TelemetryAttribute.RedflowUsageCostUsd] = event.data.usage.costUsd;
  if (event.type === 'verification.completed') attributes[TelemetryAttribute.RedflowVerificationPassed] = event.data.passed;
  if (event.type === 'run.completed' || event.type === 'run.failed') {
    attributes[TelemetryAttribute.RedflowOutcomeStatus] = event.data.outcome.status;
    attributes[TelemetryAttribute.RedflowOutcomeReason] = event.data.outcome.reason;
  }
  return attributes;
}

/** `transport`, with the run's trace context added to every request it sends. */
function carrying(transport: Transport, headers: Headers): Transport {
  return {
    request: (subject, data, options) => transport.request(subject, data, { ...options, headers: options.headers === undefined ? headers : { ...options.headers, ...headers } }),
    serve: (subject, handler, options) => transport.serve(subject, handler, options),
    publish: (subject, data, published) => transport.publish(subject, data, published),
    subscribe: (pattern, handler) => transport.subscribe(pattern, handler),
    close: () => transport.close(),
  };
}
