import type { Attributes, Span } from '@opentelemetry/api';
import type { ModelAnswer } from '../actors/model.js';
import type { ToolResult } from '../actors/tool.js';
import { GenAiOperation, TelemetryAttribute } from './names.js';
import { contentAttribute, parentContext, recordFailure, type OtelParts } from './otelParts.js';
import type { ActorCallTelemetry, ModelCall, ToolCall } from './telemetry.js';
import { formatTraceparent } from './traceContext.js';

/**
 * The `chat <model>` span of a model call this process serves (kind CLIENT: it calls the
 * provider), a child of the run span that sent the request. It carries the provider, the model,
 * the tokens used and the attempts made; with content capture on, the messages sent and the
 * answer (redacted). The call's duration and tokens are also recorded as the GenAI metrics.
 */
export function startModelCall(parts: OtelParts, call: ModelCall): ActorCallTelemetry<ModelAnswer> {
  const { api, tracer, instruments } = parts;
  const metric: Attributes = {
    [TelemetryAttribute.OperationName]: GenAiOperation.Chat,
    [TelemetryAttribute.ProviderName]: call.provider,
    ...(call.model !== undefined && { [TelemetryAttribute.RequestModel]: call.model }),
  };
  const span = tracer.startSpan(
    call.model === undefined ? GenAiOperation.Chat : `${GenAiOperation.Chat} ${call.model}`,
    {
      kind: api.SpanKind.CLIENT,
      attributes: {
        ...metric,
        [TelemetryAttribute.RedflowTraceId]: call.request.traceId,
        [TelemetryAttribute.RedflowIteration]: call.request.iteration,
        ...(call.request.purpose !== undefined && { [TelemetryAttribute.RedflowModelPurpose]: call.request.purpose }),
        ...(parts.captureContent && { [TelemetryAttribute.InputMessages]: contentAttribute(call.request.messages.map(asMessage)) }),
      },
    },
    parentContext(api, call.headers, call.request.traceId),
  );
  const started = performance.now();
  const served = instruments.callStarted({ [TelemetryAttribute.RedflowActor]: 'model' });
  return {
    ...activeWithin(parts, span),
    end(answer) {
      served();
      const seconds = (performance.now() - started) / 1000;
      span.setAttribute(TelemetryAttribute.RedflowAttempts, answer.attempts);
      const finishReasons = (answer as { finishReasons?: unknown }).finishReasons;
      if (Array.isArray(finishReasons) && finishReasons.every((reason) => typeof reason === 'string')) {
        span.setAttribute(TelemetryAttribute.ResponseFinishReasons, finishReasons as string[]);
      }
      if (answer.usage !== undefined) {
        span.setAttributes({ [TelemetryAttribute.UsageInputTokens]: answer.usage.promptTokens, [TelemetryAttribute.UsageOutputTokens]: answer.usage.completionTokens });
        instruments.tokenUsage.record(answer.usage.promptTokens, { ...metric, [TelemetryAttribute.TokenType]: 'input' });
        instruments.tokenUsage.record(answer.usage.completionTokens, { ...metric, [TelemetryAttribute.TokenType]: 'output' });
      }
      if (parts.captureContent) span.setAttribute(TelemetryAttribute.OutputMessages, contentAttribute([asMessage({ role: 'assistant', content: answer.text })]));
      instruments.operationDuration.record(seconds, metric);
      span.end();
    },
    fail(error) {
      served();
      const type = recordFailure(parts, span, error);
      instruments.operationDuration.record((performance.now() - started) / 1000, { ...metric, [TelemetryAttribute.ErrorType]: type });
      span.end();
    },
  };
}

/**
 * The `execute_tool <name>` span of a tool call this process serves, a child of the run span
 * that sent the request: the tool, the call's id (its idempotency key), whether it failed and
 * with which code; with content capture on, its input and output (redacted). The call's
 * duration is the metric `redflow.tool.duration`.
 */
export function startToolCall(parts: OtelParts, call: ToolCall): ActorCallTelemetry<ToolResult> {
  const { api, tracer, instruments } = parts;
  const name = call.tool.name;
  const span = tracer.startSpan(
    `${GenAiOperation.ExecuteTool} ${name}`,
    {
      kind: api.SpanKind.INTERNAL,
      attributes: {
        [TelemetryAttribute.OperationName]: GenAiOperation.ExecuteTool,
        [TelemetryAttribute.ToolName]: name,
        [TelemetryAttribute.ToolType]: 'function',
        [TelemetryAttribute.ToolCallId]: call.request.idempotencyKey,
        ...(call.tool.description !== undefined && { [TelemetryAttribute.ToolDescription]: call.tool.description }),
        [TelemetryAttribute.RedflowTraceId]: call.request.traceId,
        [TelemetryAttribute.RedflowIteration]: call.request.iteration,
        ...(parts.captureContent && { [TelemetryAttribute.ToolCallArguments]: contentAttribute(call.request.input) }),
      },
    },
    parentContext(api, call.headers, call.request.traceId),
  );
  const started = performance.now();
  const served = instruments.callStarted({ [TelemetryAttribute.RedflowActor]: 'tool', [TelemetryAttribute.ToolName]: name });
  const finish = (errorType: string | undefined) => {
    served();
    instruments.toolDuration.record((performance.now() - started) / 1000, {
      [TelemetryAttribute.ToolName]: name,
      ...(errorType !== undefined && { [TelemetryAttribute.ErrorType]: errorType }),
    });
    span.end();
  };
  return {
    ...activeWithin(parts, span),
    end(result) {
      span.setAttribute(TelemetryAttribute.RedflowToolOk, result.ok);
      if (result.ok) {
        if (parts.captureContent) span.setAttribute(TelemetryAttribute.ToolCallResult, contentAttribute(result.output));
        finish(undefined);
      } else {
        finish(recordFailure(parts, span, result.error));
      }
    },
    fail(error) {
      finish(recordFailure(parts, span, error));
    },
  };
}

/** `within` and `traceparent` for a call's span: the work runs with it as the active span. */
function activeWithin(parts: OtelParts, span: Span): Pick<ActorCallTelemetry<unknown>, 'within' | 'traceparent'> {
  const active = parts.api.trace.setSpan(parts.api.context.active(), span);
  const context = span.spanContext();
  return {
    within: (work) => parts.api.context.with(active, work),
    traceparent: parts.api.isSpanContextValid(context) ? formatTraceparent(context) : undefined,
  };
}

/** A chat message in the GenAI conventions' message shape. */
function asMessage(message: { readonly role: string; readonly content: string }): unknown {
  return { role: message.role, parts: [{ type: 'text', content: message.content }] };
}
