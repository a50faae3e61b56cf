import type { ModelFallbackFailure, ModelIdentity } from '../contracts/schema-types.js';

/** Most failed models a `model.answered` names: a node has at most 5 fallbacks. */
const MAX_FAILURES = 5;

/** What `model.answered` records of a switch to a fallback model. */
export interface ModelSwitch {
  readonly answeredBy: ModelIdentity;
  readonly fallbacks: ModelFallbackFailure[];
}

function text(value: unknown, max: number): string {
  const said = typeof value === 'string' ? value : String(value);
  // The mark counts: the schema bounds each field to `max`.
  return said.length > max ? `${said.slice(0, max - 1)}…` : said;
}

/**
 * The switch `answeredBy` and `fallbacks` of a model's reply describe, bounded for the log (at
 * most 5 failures, each field cut), or undefined when the node's own model answered. The reply
 * may come from a model worker over NATS, so nothing of its shape is trusted; it is redacted
 * before it reaches the machine.
 *
 * @example
 * ```ts
 * const change = modelSwitch(event.answeredBy, event.fallbacks);
 * if (change !== undefined) Object.assign(data, change);
 * ```
 */
export function modelSwitch(answeredBy: unknown, fallbacks: unknown): ModelSwitch | undefined {
  if (!Array.isArray(fallbacks) || fallbacks.length === 0 || typeof answeredBy !== 'object' || answeredBy === null) return undefined;
  const by = answeredBy as Partial<Record<keyof ModelIdentity, unknown>>;
  return {
    answeredBy: { provider: text(by.provider, 40), model: text(by.model, 200) },
    fallbacks: fallbacks.slice(0, MAX_FAILURES).map((entry: unknown) => {
      const failure = (typeof entry === 'object' && entry !== null ? entry : {}) as Partial<Record<keyof ModelFallbackFailure, unknown>>;
      return { provider: text(failure.provider, 40), model: text(failure.model, 200), code: text(failure.code, 60), message: text(failure.message, 300) };
    }),
  };
}

/**
 * Which model answered, bounded for the log, when a reply says (`answeredBy`): a verifier model
 * always says, so `verification.completed` records which model verified.
 *
 * @example
 * ```ts
 * modelIdentity({ provider: 'openai', model: 'gpt-4o' }) // { provider: 'openai', model: 'gpt-4o' }
 * ```
 */
export function modelIdentity(answeredBy: unknown): ModelIdentity | undefined {
  if (typeof answeredBy !== 'object' || answeredBy === null) return undefined;
  const by = answeredBy as Partial<Record<keyof ModelIdentity, unknown>>;
  if (by.provider === undefined || by.model === undefined) return undefined;
  return { provider: text(by.provider, 40), model: text(by.model, 200) };
}

/**
 * One line saying a fallback answered: "answered by anthropic claude-x after openai gpt-4o-mini
 * failed (MODEL_SERVER_ERROR)", for `redflow replay --steps` and the editor's step details.
 *
 * @example
 * ```ts
 * const line = switchLine(event.data); // undefined when the node's own model answered
 * ```
 */
export function switchLine(data: { readonly answeredBy?: ModelIdentity; readonly fallbacks?: readonly ModelFallbackFailure[] }): string | undefined {
  const { answeredBy, fallbacks } = data;
  if (answeredBy === undefined || fallbacks === undefined || fallbacks.length === 0) return undefined;
  const failed = fallbacks.map((entry) => `${entry.provider} ${entry.model} failed (${entry.code})`).join(', then ');
  return `answered by ${answeredBy.provider} ${answeredBy.model} after ${failed}`;
}
