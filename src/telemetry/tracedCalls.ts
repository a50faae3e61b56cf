import type { ModelActor, ModelAnswer, ModelRequest } from '../actors/model.js';
import type { ToolRequest, ToolResult } from '../actors/tool.js';
import type { Headers } from '../actors/transport.js';
import { activeTelemetry } from './activeTelemetry.js';
import type { ActorCallTelemetry } from './telemetry.js';
import { TRACEPARENT_HEADER, formatTraceparent, parseTraceparent } from './traceContext.js';

/**
 * Makes model call `complete` inside its `chat` span when telemetry is on (else it only makes
 * it). The span ends with the answer or the error; a failure of telemetry itself never reaches
 * the call.
 */
export function traceModelCall(subject: string, model: ModelActor, request: ModelRequest, headers: Headers, complete: () => Promise<ModelAnswer>): Promise<ModelAnswer> {
  const telemetry = activeTelemetry();
  if (telemetry === undefined) return complete();
  return traced(() => telemetry.modelCall({ subject, provider: model.kind, model: model.model, request, headers }), complete);
}

/**
 * Runs tool call `execute` inside its `execute_tool` span when telemetry is on (else it only runs
 * it). `execute` is given the trace context to hand on: the span's, or else the one the request
 * came with (a core with telemetry on, a tool process without), so what the tool starts (a
 * subagent's run) still joins the caller's trace.
 */
export function traceToolCall(
  tool: { readonly name: string; readonly description?: string },
  request: ToolRequest,
  headers: Headers,
  execute: (traceparent: string | undefined) => Promise<ToolResult>,
): Promise<ToolResult> {
  const received = parseTraceparent(headers[TRACEPARENT_HEADER]);
  const passed = received === undefined ? undefined : formatTraceparent(received);
  const telemetry = activeTelemetry();
  if (telemetry === undefined) return execute(passed);
  return traced(() => telemetry.toolCall({ tool, request, headers }), (call) => execute(contextOf(call) ?? passed));
}

async function traced<T>(start: () => ActorCallTelemetry<T>, work: (call: ActorCallTelemetry<T> | undefined) => Promise<T>): Promise<T> {
  let call: ActorCallTelemetry<T> | undefined;
  try {
    call = start();
  } catch {
    // Telemetry never fails a call: without its span, the call is made all the same.
    return work(undefined);
  }
  const watched = call;
  let result: T;
  try {
    result = await watched.within(() => work(watched));
  } catch (error) {
    quietly(() => watched.fail(error));
    throw error;
  }
  quietly(() => watched.end(result));
  return result;
}

/** The call span's `traceparent`, or `undefined` when telemetry cannot give it. */
function contextOf(call: ActorCallTelemetry<unknown> | undefined): string | undefined {
  try {
    return call?.traceparent;
  } catch {
    return undefined;
  }
}

function quietly(report: () => void): void {
  try {
    report();
  } catch {
    // A span lost is all a bug in telemetry may cost.
  }
}
