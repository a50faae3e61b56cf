import type { ModelFallbackConfig, ModelLlmConfig } from '../../contracts/schema-types.js';
import { RedflowError } from '../../errors.js';
import { withApiKey, type ModelActor } from '../model.js';
import { createAnthropicMessagesModel, resolveAnthropicConfig, type AnthropicMessagesModelConfig } from './anthropicMessagesModel.js';
import type { FallbackCandidate } from './fallbackModel.js';
import { lazyModel } from './lazyModel.js';
import { ModelProvider, checkProvider } from './modelProviders.js';
import type { ResolveOptions } from './modelSettings.js';
import { createOpenAiChatModel, resolveOpenAiConfig, type OpenAiChatModelConfig } from './openAiChatModel.js';

/** A model node's settings resolved against an environment, with the protocol they are for. */
export type ResolvedModelConfig =
  | { readonly protocol: 'openai'; readonly config: OpenAiChatModelConfig }
  | { readonly protocol: 'anthropic'; readonly config: AnthropicMessagesModelConfig };

/**
 * Resolves a (non-scripted) model node's config against `env`, with the rules of its provider:
 * `anthropic` with {@link resolveAnthropicConfig}, every other with {@link resolveOpenAiConfig}.
 *
 * @throws RedflowError `MODEL_PROVIDER_UNKNOWN` for a provider Redflow does not know; the
 *   resolvers' `MODEL_CONFIG_INVALID` and `MODEL_KEY_MISSING`.
 *
 * @example
 * ```ts
 * const { protocol, config } = resolveModelConfig({ provider: 'anthropic', model: 'claude-sonnet-4-5' }, process.env);
 * ```
 */
export function resolveModelConfig(nodeConfig: ModelLlmConfig, env: NodeJS.ProcessEnv, options: ResolveOptions = {}): ResolvedModelConfig {
  checkProvider(nodeConfig.provider);
  return nodeConfig.provider === ModelProvider.Anthropic
    ? { protocol: 'anthropic', config: resolveAnthropicConfig(nodeConfig, env, options) }
    : { protocol: 'openai', config: resolveOpenAiConfig(nodeConfig, env, options) };
}

/** Options of {@link createNodeModel}. */
export interface NodeModelOptions {
  /**
   * The API key the run's caller brought: given to every call of the model instead of the
   * environment's (see {@link withApiKey}), and the environment's key is then not required.
   */
  readonly apiKey?: string | undefined;
}

/**
 * The model actor of a (non-scripted) model node: its config resolved against `env`
 * ({@link resolveModelConfig}) and handed to its provider's model.
 *
 * @example
 * ```ts
 * const model = createNodeModel({ provider: 'ollama', model: 'llama3.1' }, process.env);
 * ```
 */
export function createNodeModel(nodeConfig: ModelLlmConfig, env: NodeJS.ProcessEnv, options: NodeModelOptions = {}): ModelActor {
  const apiKey = options.apiKey?.trim() || undefined;
  const resolved = resolveModelConfig(nodeConfig, env, { keyGiven: apiKey !== undefined });
  const model = resolved.protocol === 'anthropic' ? createAnthropicMessagesModel(resolved.config) : createOpenAiChatModel(resolved.config);
  const fallbacks: readonly ModelFallbackConfig[] = nodeConfig.fallbacks ?? [];
  if (fallbacks.length === 0) return withApiKey(model, apiKey);
  // A key the caller brought is for the node's own model: a fallback uses its own configured key.
  const chain: FallbackCandidate[] = [{ provider: nodeConfig.provider ?? ModelProvider.OpenAi, model: resolved.config.model, actor: withApiKey(model, apiKey) }];
  for (const [index, fallback] of fallbacks.entries()) chain.push(fallbackCandidate(fallback, index, env));
  return lazyFallbackModel(chain);
}

/**
 * `createFallbackModel(chain)`, loaded at the first call: built here (so a fallback's config
 * errors come at build time), its code kept off `import 'redflow'`, which has a module budget.
 */
function lazyFallbackModel(chain: readonly FallbackCandidate[]): ModelActor {
  const first = chain[0] as FallbackCandidate;
  return lazyModel(first.actor.kind, first.model, () => import('./fallbackModel.js').then(({ createFallbackModel }) => createFallbackModel(chain)));
}

/** One fallback's model, built like a node's; its config errors name where it sits in `fallbacks`. */
function fallbackCandidate(fallback: ModelFallbackConfig, index: number, env: NodeJS.ProcessEnv): FallbackCandidate {
  try {
    const resolved = resolveModelConfig(fallback, env);
    const actor = resolved.protocol === 'anthropic' ? createAnthropicMessagesModel(resolved.config) : createOpenAiChatModel(resolved.config);
    return { provider: fallback.provider ?? ModelProvider.OpenAi, model: resolved.config.model, actor };
  } catch (error) {
    if (!(error instanceof RedflowError)) throw error;
    const info = error.toInfo();
    throw new RedflowError({ ...info, message: `fallback ${index + 1}: ${info.message}`, path: `/fallbacks/${index}${info.path ?? ''}` });
  }
}
