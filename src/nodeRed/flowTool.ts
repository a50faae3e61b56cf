import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { startDeadline } from '../actors/deadline.js';
import { checkToolRequest, runTool } from '../runtime/serveActors.js';
import type { ToolDefinition, ToolRequest, ToolResult } from '../actors/tool.js';
import type { RequestHandler } from '../actors/transport.js';
import type { NodeRedMessage } from './nodeRedApi.js';
import { requestMarker, type NodeRedHandlerContext } from './nodeRedTransport.js';

/** How long a flow tool's body may take when its node sets no `timeoutMs` (as a `tool.module`). */
export const DEFAULT_FLOW_TOOL_TIMEOUT_MS = 30_000;

/** What a flow tool's body message carries in `msg.redflow`, besides the request's id. */
export interface FlowToolCall {
  readonly request: string;
  readonly tool: string;
  readonly traceId: string;
  readonly iteration: number;
  /** `<traceId>:<iteration>`: the same when a call is sent again after a crash. */
  readonly idempotencyKey: string;
}

/** Calls of flow tools waiting for their body to reach a `redflow-tool-out`, by request id. */
const waiting = new Map<string, { resolve: (output: unknown) => void; reject: (error: unknown) => void }>();

/** A flow tool as the agent sees it: its name, description and input schema. */
export type FlowToolSpec = Pick<ToolDefinition, 'name' | 'description' | 'inputSchema'> & { readonly timeoutMs?: number };

/**
 * The handler of a flow tool, served on its subject: the request's message goes on into the tool's
 * body (`msg.payload` is the tool's input, `msg.redflow` the call) and the call ends when a
 * message of it reaches a `redflow-tool-out` ({@link finishFlowToolCall}), or fails with
 * `TOOL_TIMEOUT` after `timeoutMs`. A failure is the tool's, seen by the model as its observation.
 *
 * @example
 * ```ts
 * transport.serve(Subject.tool(prefix, 'lookup'), flowToolHandler({ name: 'lookup', description, inputSchema }));
 * ```
 */
export function flowToolHandler(spec: FlowToolSpec): RequestHandler<ToolRequest, ToolResult> {
  const timeoutMs = spec.timeoutMs ?? DEFAULT_FLOW_TOOL_TIMEOUT_MS;
  return (request, context) => {
    const { msg, send, subject } = context as NodeRedHandlerContext;
    const tool: ToolDefinition = {
      ...spec,
      execute: (input, call) => {
        const marker = requestMarker(msg);
        if (marker === undefined) throw new Error('the request message lost its marker');
        const body: FlowToolCall = { request: marker.request, tool: spec.name, traceId: call.traceId, iteration: call.iteration, idempotencyKey: call.idempotencyKey };
        msg.payload = input;
        msg.redflow = body;
        return awaitBody(marker.request, spec.name, timeoutMs, call.signal, () => send(msg));
      },
    };
    checkToolRequest(tool, request, subject);
    return runTool(tool, request, context.signal, context.headers);
  };
}

/**
 * Ends the flow tool call a message belongs to (its `msg.redflow.request`): `msg.payload` is the
 * output; a message with `msg.error` (a Catch node's) fails the call with that error's message.
 * False when no call waits for it (it came from elsewhere, timed out, or was answered already).
 */
export function finishFlowToolCall(msg: NodeRedMessage): boolean {
  const marker = msg.redflow as Partial<FlowToolCall> | undefined;
  const id = typeof marker === 'object' && marker !== null ? marker.request : undefined;
  const call = typeof id === 'string' ? waiting.get(id) : undefined;
  if (call === undefined || id === undefined) return false;
  waiting.delete(id);
  const error = msg.error as { message?: unknown } | string | undefined;
  if (error !== undefined && error !== null) {
    const message = typeof error === 'string' ? error : typeof error.message === 'string' ? error.message : JSON.stringify(error);
    call.reject(new RedflowError(errorInfo(ErrorCode.TOOL_FAILED, `tool "${marker?.tool ?? ''}" failed: ${message}`)));
  } else {
    call.resolve(msg.payload);
  }
  return true;
}

function awaitBody(id: string, tool: string, timeoutMs: number, signal: AbortSignal, start: () => void): Promise<unknown> {
  const deadline = startDeadline(signal, timeoutMs);
  return new Promise<unknown>((resolve, reject) => {
    const end = (): void => {
      waiting.delete(id);
      deadline.dispose();
    };
    deadline.signal.addEventListener(
      'abort',
      () => {
        end();
        reject(
          deadline.timedOut()
            ? new RedflowError(
                errorInfo(ErrorCode.TOOL_TIMEOUT, `tool "${tool}" did not answer within ${timeoutMs} ms`, {
                  hint: 'make sure every path of the tool\'s flow ends in its redflow tool out node, keeping msg.redflow, or raise its timeout',
                }),
              )
            : new RedflowError(errorInfo(ErrorCode.RUN_ABORTED, `the call of tool "${tool}" was abandoned`)),
        );
      },
      { once: true },
    );
    waiting.set(id, {
      resolve: (output) => {
        end();
        resolve(output);
      },
      reject: (error) => {
        end();
        reject(error);
      },
    });
    start();
  });
}
