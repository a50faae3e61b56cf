import type { ModelAnswer, ModelRequest } from '../actors/model.js';
import type { ToolRequest, ToolResult } from '../actors/tool.js';
import type { Headers, Transport } from '../actors/transport.js';
import type { AgentEvent } from '../events/eventTypes.js';

/** A stretch of a run in this process: from its start or a resumption to its ending, a wait, or a stop. */
export interface RunStretch {
  readonly traceId: string;
  /** True when the stretch continues the run from its log (a resume, a takeover, an answer to a wait). */
  readonly resumed: boolean;
  /** When the run began (its `run.started`'s `startedAt`). */
  readonly startedAt: string;
  readonly flowId?: string;
  readonly conversationId?: string;
  /**
   * The call of another run that started this one as its subagent (`run.started`'s `parent`):
   * the stretch is placed in that run's trace, below the call's span (`traceparent`).
   */
  readonly parent?: { readonly traceId: string; readonly traceparent?: string };
}

/** What a run's stretch reports to telemetry while it goes on. */
export interface RunTelemetry {
  /** Each event once it is in the log, in order. */
  onEvent(event: AgentEvent): void;
  /** The transport the run's model, tool and memory requests go through: each carries the run's trace context. */
  carry(transport: Transport): Transport;
  /** The stretch is over: `error` is why it ended without an outcome (a wait, a stop, a failed log), if it did. */
  end(error?: unknown): void;
}

/** A model or tool call this process serves, as telemetry sees it. */
export interface ActorCallTelemetry<T> {
  /** Runs `work` with the call's span as the active span, so instrumentation inside it (HTTP, a nested run) descends from it. */
  within<R>(work: () => R): R;
  /** The call's span as a W3C `traceparent` value, to hand on; `undefined` when it has no valid context (no SDK). */
  readonly traceparent: string | undefined;
  /** The call answered. */
  end(result: T): void;
  /** The call failed (a thrown error: the requester gets it as `{ ok: false, error }`). */
  fail(error: unknown): void;
}

/** A model call this process serves. */
export interface ModelCall {
  readonly subject: string;
  /** The provider (`openai`, `anthropic`, `scripted`, …): the model actor's `kind`. */
  readonly provider: string;
  /** The model's name, when the actor knows it. */
  readonly model?: string | undefined;
  readonly request: ModelRequest;
  /** The request's headers: `traceparent` places the call in its run's trace. */
  readonly headers: Headers;
}

/** A tool call this process serves. */
export interface ToolCall {
  readonly tool: { readonly name: string; readonly description?: string };
  readonly request: ToolRequest;
  readonly headers: Headers;
}

/**
 * Where Redflow reports what it does: runs (from their events), and the model and tool calls this
 * process serves. The OpenTelemetry implementation (`enableTelemetry`) is loaded only when
 * telemetry is turned on; this interface loads nothing.
 */
export interface Telemetry {
  startRun(stretch: RunStretch): RunTelemetry;
  modelCall(call: ModelCall): ActorCallTelemetry<ModelAnswer>;
  toolCall(call: ToolCall): ActorCallTelemetry<ToolResult>;
}
