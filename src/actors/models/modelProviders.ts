import { ErrorCode, RedflowError, errorInfo, type ErrorInfo } from '../../errors.js';

/**
 * The values of a `model.llm` node's `provider`, defined once (the flow schema's enum holds the
 * same list): which protocol the model speaks. Pure data, so the editor's validation can use it.
 */
export const ModelProvider = {
  Scripted: 'scripted',
  OpenAi: 'openai',
  OpenAiCompatible: 'openai-compatible',
  Ollama: 'ollama',
  Vllm: 'vllm',
  LlamaCpp: 'llamacpp',
  Anthropic: 'anthropic',
} as const;

/** One of {@link ModelProvider}'s values. */
export type ModelProvider = (typeof ModelProvider)[keyof typeof ModelProvider];

const KNOWN: ReadonlySet<string> = new Set(Object.values(ModelProvider));

/** True for a `provider` value Redflow knows; `undefined` (the default, `openai`) counts as known. */
export function isKnownProvider(provider: unknown): provider is ModelProvider | undefined {
  return provider === undefined || (typeof provider === 'string' && KNOWN.has(provider));
}

/**
 * The `MODEL_PROVIDER_UNKNOWN` error for a `provider` value Redflow does not know, listing those it does.
 *
 * @example
 * ```ts
 * if (!isKnownProvider(config.provider)) throw new RedflowError(unknownProvider(config.provider));
 * ```
 */
export function unknownProvider(provider: unknown): ErrorInfo {
  const said = typeof provider === 'string' ? `the model provider ${JSON.stringify(provider.slice(0, 60))} is unknown` : `the model provider must be a name, got ${provider === null ? 'null' : typeof provider}`;
  return errorInfo(ErrorCode.MODEL_PROVIDER_UNKNOWN, said, {
    hint: `set "provider" to one of ${[...KNOWN].map((name) => `"${name}"`).join(', ')}: "anthropic" speaks Anthropic's Messages API, "scripted" plays back answers, the others speak OpenAI's Chat Completions`,
    path: '/provider',
  });
}

/** Throws {@link unknownProvider}'s error unless `provider` is known. */
export function checkProvider(provider: unknown): asserts provider is ModelProvider | undefined {
  if (!isKnownProvider(provider)) throw new RedflowError(unknownProvider(provider));
}
