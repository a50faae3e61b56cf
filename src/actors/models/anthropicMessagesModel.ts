import type { ModelLlmConfig } from '../../contracts/schema-types.js';
import type { ModelActor } from '../model.js';
import { lazyModel } from './lazyModel.js';
import { checkSettings, configError, copyTuning, firstSet, hostIs, missingKeyError, requireModelName, type ModelSettings, type ResolveOptions } from './modelSettings.js';
import { ANTHROPIC_DEFAULTS, type AnthropicMessagesModelConfig } from './providerDefaults.js';

export { ANTHROPIC_DEFAULTS, type AnthropicMessagesModelConfig } from './providerDefaults.js';

/** The host of Anthropic's own API, which refuses a request without a key. */
const ANTHROPIC_API_HOST = 'api.anthropic.com';

/**
 * Turns a model node's `llm` config (`provider: "anthropic"`) plus the environment into
 * {@link AnthropicMessagesModelConfig}: `baseUrl` from the node, `$REDFLOW_MODEL_BASE_URL`,
 * `$ANTHROPIC_BASE_URL`, or Anthropic's API; the key from `$<apiKeyEnv>` (default
 * `$ANTHROPIC_API_KEY`); `model` from the node or `$REDFLOW_MODEL`. Blank values count as unset.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` when no model name is given anywhere;
 *   `MODEL_KEY_MISSING` when the server is Anthropic's, the key's variable is not set and the key
 *   does not come with each request.
 *
 * @example
 * ```ts
 * const model = createAnthropicMessagesModel(resolveAnthropicConfig({ provider: 'anthropic', model: 'claude-sonnet-4-5' }, process.env));
 * ```
 */
export function resolveAnthropicConfig(nodeConfig: ModelLlmConfig, env: NodeJS.ProcessEnv, options: ResolveOptions = {}): AnthropicMessagesModelConfig {
  const baseUrl = firstSet(nodeConfig.baseUrl, env.REDFLOW_MODEL_BASE_URL, env.ANTHROPIC_BASE_URL) ?? ANTHROPIC_DEFAULTS.baseUrl;
  const model = requireModelName(nodeConfig, env, '"claude-sonnet-4-5"');
  const apiKeyEnv = nodeConfig.apiKeyEnv ?? ANTHROPIC_DEFAULTS.apiKeyEnv;
  const apiKey = firstSet(env[apiKeyEnv]);
  if (apiKey === undefined && options.keyGiven !== true && hostIs(baseUrl, ANTHROPIC_API_HOST)) {
    throw missingKeyError(apiKeyEnv, baseUrl, 'or point the model node\'s "baseUrl" at an Anthropic-compatible server that needs none');
  }
  const config: { -readonly [K in keyof ModelSettings]: ModelSettings[K] } = { baseUrl, model };
  if (apiKey !== undefined) config.apiKey = apiKey;
  copyTuning(nodeConfig, config);
  return config;
}

/**
 * A model actor for Anthropic's Messages API (and servers speaking it), through the official
 * `@anthropic-ai/sdk` library (loaded at the first call).
 *
 * Each call streams `{model, system, messages, max_tokens, stream: true, …}` from
 * `<baseUrl>/v1/messages` and returns the text of the `text_delta`s with the usage of
 * `message_start` and `message_delta`. Retries, deadlines, the guards on the response (size cap,
 * UTF-8, no redirects) and the codes of failures are those of {@link createOpenAiChatModel}; an
 * `overloaded_error` (HTTP 529, or an `error` event mid-stream) is retried like a 5xx.
 * `jsonMode` does not apply. A request that carries its decision contract forces a tool whose
 * input schema is the decision (`decisionFormat`, default `json_schema`), or offers the allowed
 * tools natively (`protocol: "tools"`); the answer is returned as the decision JSON text either way.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` for an unusable config (checked here, not per call).
 *
 * @example
 * ```ts
 * const model = createAnthropicMessagesModel({ baseUrl: 'https://api.anthropic.com', model: 'claude-sonnet-4-5', apiKey });
 * const { text, usage } = await model.complete({ traceId: 't-1', iteration: 1, messages }, AbortSignal.timeout(120_000));
 * ```
 */
export function createAnthropicMessagesModel(config: AnthropicMessagesModelConfig): ModelActor {
  // Checked now, so a config's errors come at build time; the streaming client comes with the first call.
  const { model } = checkSettings(config, ANTHROPIC_DEFAULTS.baseUrl);
  if (config.temperature !== undefined && !(config.temperature >= 0 && config.temperature <= 1)) {
    throw configError(`temperature must be between 0 and 1 for Anthropic, got ${String(config.temperature)}`, 'Lower "temperature" in the model node\'s config.', '/temperature');
  }
  return lazyModel('anthropic', model, () => import('./anthropicMessagesStream.js').then(({ anthropicMessagesStream }) => anthropicMessagesStream(config)));
}
