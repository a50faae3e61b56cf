import type { ModelActor, ModelAnswer, ModelRequest } from '../actors/model.js';
import type { ToolRequest, ToolResult } from '../actors/tool.js';
import type { Headers } from '../actors/transport.js';
import { activeTelemetry } from './activeTelemetry.js';
import type { ActorCallTelemetry } from './telemetry.js';

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

/** Runs tool call `execute` inside its `execute_tool` span when telemetry is on (else it only runs it). */
export function traceToolCall(tool: { readonly name: string; readonly description?: string }, request: ToolRequest, headers: Headers, execute: () => Promise<ToolResult>): Promise<ToolResult> {
  const telemetry = activeTelemetry();
  if (telemetry === undefined) return execute();
  return traced(() => telemetry.toolCall({ tool, request, headers }), execute);
}

async function traced<T>(start: () => ActorCallTelemetry<T>, work: () => Promise<T>): Promise<T> {
  let call: ActorCallTelemetry<T> | undefined;
  try {
    call = start();
  } catch {
    // Telemetry never fails a call: without its span, the call is made all the same.
    return work();
  }
  const watched = call;
  let result: T;
  try {
    result = await watched.within(work);
  } catch (error) {
    quietly(() => watched.fail(error));
    throw error;
  }
  quietly(() => watched.end(result));
  return result;
}

function quietly(report: () => void): void {
  try {
    report();
  } catch {
    // A span lost is all a bug in telemetry may cost.
  }
}
