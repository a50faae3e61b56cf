import type { TokenUsage } from '../contracts/schema-types.js';

/** One chat message of a model request. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** What the core asks a model actor for each iteration. */
export interface ModelRequest {
  readonly traceId: string;
  readonly iteration: number;
  readonly messages: readonly ChatMessage[];
}

/** A model actor's answer: the raw text, validated by the core, not by the actor. */
export interface ModelAnswer {
  readonly text: string;
  readonly usage?: TokenUsage;
  /** How many attempts it took (retries included). */
  readonly attempts: number;
}

/**
 * A model: turns a request into answer text. Does all the I/O (HTTP, retries) and honours `signal`.
 * Failures are thrown as `RedflowError` with a `MODEL_*` code.
 */
export interface ModelActor {
  /** What kind of model this is, for messages: `scripted`, `openai`, … */
  readonly kind: string;
  complete(request: ModelRequest, signal: AbortSignal): Promise<ModelAnswer>;
}
