
/**
 * What a tool's `execute` is given besides its (already validated) input.
 *
 * @example
 * ```ts
 * const refund: ToolDefinition<{ orderId: string }> = {
 *   name: 'refund',
 *   description: 'Refunds an order',
 *   inputSchema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } },
 *   // The key is the same when a call is re-sent after a crash: the payment provider refunds once.
 *   execute: ({ orderId }, context: ToolContext) => payments.refund(orderId, { idempotencyKey: context.idempotencyKey, signal: context.signal }),
 * };
 * ```
 */
export interface ToolContext {
  /** Aborted when the run is aborted or times out, or the tool's own timeout passes. */
  readonly signal: AbortSignal;
  /**
   * Stable for one logical call: a call re-sent after a crash carries the same key, so a tool with
   * external effects can make them once.
   */
  readonly idempotencyKey: string;
  readonly traceId: string;
  readonly iteration: number;
  /**
   * The W3C trace context (`traceparent` header value) of this call: its `execute_tool` span when
   * telemetry is on in this process, else the span of the run that sent it, if any. Hand it on
   * (an HTTP request's `traceparent` header, a run the tool starts) to join the run's trace.
   */
  readonly traceparent?: string;
  /**
   * Tells whoever watches the run how far the call is (a progress bar, a status line): each report
   * is an activity item of this call (`tool_progress`), never logged. Absent where nobody watches.
   */
  readonly progress?: (report: ToolProgress) => void;
  /**
   * Says where the call's work lives when it outlives this process (a remote task's id): the run's
   * log records it (`tool.attached`), and a call re-sent after a crash gets it back in `attached`.
   */
  readonly attach?: (handle: Readonly<Record<string, string>>) => void;
  /** The handle a previous attempt of this call gave `attach`: go back to that work, do not start it again. */
  readonly attached?: Readonly<Record<string, string>>;
}

/**
 * How far a tool call is, as the tool says it: a count out of a total (when known) and/or words.
 *
 * @example
 * ```ts
 * context.progress?.({ progress: 3, total: 10, message: 'page 3 of 10' });
 * ```
 */
export interface ToolProgress {
  readonly progress?: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * A tool the agent may call: what `tool.module` files export, and what `tool.http` builds.
 *
 * @example
 * ```ts
 * export default {
 *   name: 'add',
 *   description: 'Adds two numbers',
 *   inputSchema: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'number' }, b: { type: 'number' } } },
 *   execute: ({ a, b }) => ({ sum: a + b }),
 * } satisfies ToolDefinition<{ a: number; b: number }>;
 * ```
 */
export interface ToolDefinition<Input = Record<string, unknown>, Output = unknown> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of `input`; the core validates the model's input against it before calling. */
  readonly inputSchema: Record<string, unknown>;
  /**
   * True when running a call again with the same input has no effect that matters: the tool only
   * reads, or its effect is idempotent by itself. Distributed tool workers then keep no result for
   * it (no KV writes per call): a call re-sent after a crash simply runs again. Leave it out for a
   * tool with effects, whose result is kept so that a repeated call is answered from it.
   */
  readonly idempotent?: boolean;
  execute(input: Input, context: ToolContext): Promise<Output> | Output;
}

export type { ToolRequest, ToolResult } from '../machines/protocol.js';
