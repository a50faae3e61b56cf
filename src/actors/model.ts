import type { ModelAnswer, ModelRequest } from '../machines/protocol.js';

export type { ChatMessage, DecisionContract, DecisionTool, ModelAnswer, ModelRequest } from '../machines/protocol.js';

/**
 * What the process hosting a model gives one call besides the request. It travels beside the
 * request, never in it: a {@link ModelRequest} is recorded in the event log and crosses NATS, this
 * stays in the process that makes the call.
 */
export interface ModelCallOptions {
  /**
   * The API key for this call only ("bring your own key"), used instead of the model's configured
   * one (`$OPENAI_API_KEY`, `apiKeyEnv`). It is a secret of the call's own scope (see
   * `withScopedSecret`): redacted from the call's answer, its streamed pieces and its errors, and
   * from whatever the caller's code records or prints while the call runs, but never from other
   * requests' output (a client's "key" could be any word); afterwards it is forgotten. A model
   * without keys (the scripted one) ignores it. Blank counts as absent.
   */
  readonly apiKey?: string | undefined;
  /**
   * Called with each piece of the answer's text as the model streams it, in order, for a live view
   * (the agent executor's `content_chunk` activity, `<prefix>.runs.chunk.<traceId>`). The text is
   * what a person reads: the `message` of a final answer, its JSON escapes decoded, never the
   * answer format's JSON (a tool call shows nothing); an answer that is not JSON passes as it is
   * (`createAnswerTextExtractor`). Never
   * logged: the log records the whole answer once. Pieces are redacted like the answer, and cut
   * only at whitespace, so a secret is never split across two pieces. When an attempt fails and
   * the call is retried, the next attempt's pieces carry the next `attempt` number and start the
   * answer again. A model that does not stream (the scripted one) gives its answer as one piece.
   */
  readonly onChunk?: ((chunk: ModelChunk) => void) | undefined;
}

/**
 * One piece of a streamed answer (see {@link ModelCallOptions.onChunk}).
 *
 * @example
 * ```ts
 * const answer = await model.complete(request, signal, { onChunk: (chunk: ModelChunk) => process.stdout.write(chunk.text) });
 * ```
 */
export interface ModelChunk {
  /** The text that follows the pieces before it in the same attempt. */
  readonly text: string;
  /** The attempt it belongs to, from 1: pieces of an earlier attempt are void once a later one starts. */
  readonly attempt: number;
}

/**
 * Hands `chunk` to a call's `onChunk`. A viewer that throws loses its view, not the call: the
 * error is dropped, so a bug in a live display never fails (or retries) a model request.
 */
export function deliverChunk(onChunk: ((chunk: ModelChunk) => void) | undefined, chunk: ModelChunk): void {
  try {
    onChunk?.(chunk);
  } catch {
    // The answer still comes whole in the reply; only this live piece is lost.
  }
}

/**
 * A model: turns a request into answer text. Does all the I/O (HTTP, retries) and honours `signal`.
 * Failures are thrown as `RedflowError` with a `MODEL_*` code.
 *
 * @example
 * ```ts
 * const echo: ModelActor = {
 *   kind: 'echo',
 *   complete: async (request) => ({ text: JSON.stringify({ action: 'final', message: request.messages.at(-1)?.content ?? '', confidence: 1 }), attempts: 1 }),
 * };
 * const actors = serveActors({ model: echo, tools: [] });
 * ```
 */
export interface ModelActor {
  /** What kind of model this is, for messages: `scripted`, `openai`, `anthropic`, … */
  readonly kind: string;
  /** The model's name at its provider (`gpt-4o-mini`), when it has one: for telemetry. */
  readonly model?: string;
  complete(request: ModelRequest, signal: AbortSignal, options?: ModelCallOptions): Promise<ModelAnswer>;
}

/**
 * `model` with `apiKey` given to every call: the model of one run whose caller brought its own key.
 * A key passed to a call of the result still wins. A blank `apiKey` returns `model` itself.
 *
 * @example
 * ```ts
 * const perRun = withApiKey(sharedModel, request.userApiKey);
 * serveActors({ model: perRun, tools });
 * ```
 */
export function withApiKey(model: ModelActor, apiKey: string | undefined): ModelActor {
  if (apiKey === undefined || apiKey.trim() === '') return model;
  return {
    kind: model.kind,
    ...(model.model !== undefined && { model: model.model }),
    complete: (request, signal, options) => model.complete(request, signal, { apiKey, ...definedOnly(options) }),
  };
}

/** The options whose values are set, so an `apiKey: undefined` does not hide the bound one. */
function definedOnly(options: ModelCallOptions | undefined): ModelCallOptions {
  if (options === undefined) return {};
  if (options.apiKey !== undefined) return options;
  return options.onChunk === undefined ? {} : { onChunk: options.onChunk };
}
