/**
 * The machine's protocol: the messages the REACT statechart exchanges with its model, tool and
 * memory actors over the transport. The machine owns them; actors import them from here.
 */
import type { ConversationTurnData, ModelFallbackFailure, ModelIdentity, TokenUsage } from '../contracts/schema-types.js';

export type { ModelFallbackFailure, ModelIdentity } from '../contracts/schema-types.js';

export type { ToolResult } from '../events/eventTypes.js';

/**
 * One chat message of a model request.
 *
 * @example
 * ```ts
 * const messages: ChatMessage[] = [
 *   { role: 'system', content: 'You are a support agent.' },
 *   { role: 'user', content: 'Where is order A-1001?' },
 * ];
 * ```
 */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** One tool the model may call, as the decision contract carries it. */
export interface DecisionTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/**
 * What an answer of a run may be, as data a model actor can turn into its provider's constrained
 * output (a JSON Schema, a forced tool, native tools): the allowed tools with their input schemas,
 * whether the agent reasons explicitly, and its outputSchema. It rides on each `ModelRequest`
 * (which crosses NATS), so a model worker needs nothing of the flow; the core still validates
 * every answer with its own rules.
 *
 * @example
 * ```ts
 * const contract = decisionContractFor(agent, toolSpecs);
 * const request: ModelRequest = { traceId, iteration: 1, messages, decision: contract };
 * ```
 */
export interface DecisionContract {
  /**
   * Equal for equal contracts, in any process (a hash of the rest): what a model actor caches the
   * compiled schema by, since a contract that crossed NATS is a new object at each request.
   */
  readonly key: string;
  readonly tools: readonly DecisionTool[];
  /** The agent's reasoning is "explicit": answers carry thought, reflection, decision and reason. */
  readonly explicitReasoning: boolean;
  /** The agent's outputSchema: a final answer may carry an `output` matching it. */
  readonly outputSchema?: unknown;
}

/**
 * What the core asks a model actor for each iteration.
 *
 * @example
 * ```ts
 * const request: ModelRequest = { traceId: 'run-1', iteration: 1, messages: [{ role: 'user', content: 'Where is order A-1001?' }] };
 * const answer = await model.complete(request, AbortSignal.timeout(30_000));
 * ```
 */
export interface ModelRequest {
  readonly traceId: string;
  readonly iteration: number;
  readonly messages: readonly ChatMessage[];
  /**
   * `verification`: the request verifies a final answer (the `verifying` state): its answer is the
   * verification shape, not an action, so no decision contract goes with it.
   */
  readonly purpose?: 'verification';
  /**
   * What the answer may be, for a model that holds the model to it (constrained output, native
   * tools). Added by the run's transport, not by the statechart, and never logged.
   */
  readonly decision?: DecisionContract;
}

/**
 * A model actor's answer: the raw text, validated by the core, not by the actor.
 *
 * @example
 * ```ts
 * const answer: ModelAnswer = await model.complete(request, signal);
 * console.log(answer.text, answer.usage?.totalTokens, answer.attempts);
 * ```
 */
export interface ModelAnswer {
  readonly text: string;
  readonly usage?: TokenUsage;
  /** How many attempts it took (retries included). */
  readonly attempts: number;
  /** Why the model stopped, in its provider's words (`stop`, `length`, `end_turn`), when it said: for telemetry, never logged. */
  readonly finishReasons?: readonly string[];
  /** Which model answered, when the node lists fallbacks (`createFallbackModel`). */
  readonly answeredBy?: ModelIdentity;
  /** The models that failed before the one that answered, in order: set only when one did. */
  readonly fallbacks?: readonly ModelFallbackFailure[];
}

/**
 * What the core sends on a tool's subject.
 *
 * @example
 * ```ts
 * const request: ToolRequest = { traceId: 'run-1', iteration: 2, tool: 'lookup_order', input: { orderId: 'A-1001' }, idempotencyKey: 'run-1:2' };
 * ```
 */
export interface ToolRequest {
  readonly traceId: string;
  readonly iteration: number;
  readonly tool: string;
  readonly input: Record<string, unknown>;
  readonly idempotencyKey: string;
  /**
   * Where the call's work lives, when the call is re-sent after the tool said so (`tool.attached`):
   * the tool re-attaches to that work (a remote task) instead of starting it again.
   */
  readonly attached?: Readonly<Record<string, string>>;
}

/** What a run sends its memory actor at the end: the turn to add to the conversation. */
export interface MemoryAppendRequest {
  readonly conversationId: string;
  readonly turn: Readonly<ConversationTurnData>;
  /** Turns kept (older ones are dropped). */
  readonly maxTurns: number;
}
