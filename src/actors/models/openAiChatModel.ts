import type { ModelLlmConfig } from '../../contracts/schema-types.js';
import type { ModelActor } from '../model.js';
import { lazyModel } from './lazyModel.js';
import { checkSettings, copyTuning, firstSet, hostIs, missingKeyError, requireModelName, type ResolveOptions } from './modelSettings.js';
import { OPENAI_DEFAULTS, OPENAI_EXAMPLE_URL, type OpenAiChatModelConfig } from './providerDefaults.js';

export { OPENAI_DEFAULTS, type OpenAiChatModelConfig } from './providerDefaults.js';

/** Where local servers listen by default, for a model node that names one as its provider. */
export const LOCAL_SERVER_BASE_URLS = {
  ollama: 'http://127.0.0.1:11434/v1',
  vllm: 'http://127.0.0.1:8000/v1',
  llamacpp: 'http://127.0.0.1:8080/v1',
} as const;

/**
 * Turns a model node's `llm` config plus the environment into {@link OpenAiChatModelConfig}:
 * `baseUrl` from the node, `$REDFLOW_MODEL_BASE_URL`, `$OPENAI_BASE_URL`, the local default of an
 * `ollama`/`vllm`/`llamacpp` provider, or OpenAI's; the API key
 * from `$<apiKeyEnv>` (default `$OPENAI_API_KEY`), absent when unset; `model` from the node or
 * `$REDFLOW_MODEL`. Blank values count as unset.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` when no model name is given anywhere;
 *   `MODEL_KEY_MISSING` when the server is OpenAI's and the key's variable is not set (see
 *   {@link needsApiKey}) and the key does not come with each request, so a run without one stops
 *   before any request instead of retrying.
 *
 * @example
 * ```ts
 * const model = createOpenAiChatModel(resolveOpenAiConfig({ model: 'llama3.1', baseUrl: 'http://127.0.0.1:11434/v1' }, process.env));
 * ```
 */
export function resolveOpenAiConfig(nodeConfig: ModelLlmConfig, env: NodeJS.ProcessEnv, options: ResolveOptions = {}): OpenAiChatModelConfig {
  const baseUrl =
    firstSet(nodeConfig.baseUrl, env.REDFLOW_MODEL_BASE_URL, env.OPENAI_BASE_URL) ??
    LOCAL_SERVER_BASE_URLS[nodeConfig.provider as keyof typeof LOCAL_SERVER_BASE_URLS] ??
    OPENAI_DEFAULTS.baseUrl;
  const model = requireModelName(nodeConfig, env, '"gpt-4o-mini", or "llama3.1" for Ollama');
  const apiKeyEnv = nodeConfig.apiKeyEnv ?? OPENAI_DEFAULTS.apiKeyEnv;
  const apiKey = firstSet(env[apiKeyEnv]);
  if (apiKey === undefined && options.keyGiven !== true && needsApiKey(baseUrl)) {
    throw missingKeyError(apiKeyEnv, baseUrl, 'or point the model node\'s "baseUrl" (or $OPENAI_BASE_URL) at a server that needs none, such as Ollama');
  }
  const config: { -readonly [K in keyof OpenAiChatModelConfig]: OpenAiChatModelConfig[K] } = { baseUrl, model };
  if (apiKey !== undefined) config.apiKey = apiKey;
  copyTuning(nodeConfig, config);
  if (nodeConfig.jsonMode !== undefined) config.jsonMode = nodeConfig.jsonMode;
  return config;
}

/** The host of OpenAI's own API, which answers every request without a key with 401. */
const OPENAI_API_HOST = 'api.openai.com';

/**
 * Whether a run against `baseUrl` cannot do without an API key. Without a key no `Authorization`
 * header is sent, which local and self-hosted OpenAI-compatible servers (Ollama, vLLM, llama.cpp)
 * accept; only OpenAI's own API is known to refuse it, so only its host requires one. A server
 * elsewhere that wants a key says so with a 401 at the first call (not retried).
 */
export function needsApiKey(baseUrl: string): boolean {
  return hostIs(baseUrl, OPENAI_API_HOST);
}

/**
 * A model actor for any OpenAI-compatible Chat Completions server: OpenAI, Ollama, vLLM,
 * llama.cpp's server, …, through the official `openai` library (loaded at the first call).
 *
 * Each call streams `{model, messages, stream: true, stream_options: {include_usage: true}, …}`
 * from `<baseUrl>/chat/completions` and returns the text of the deltas with the usage of the last
 * chunk. Network errors, per-attempt timeouts (request and whole stream), HTTP 429 (honouring
 * `Retry-After`), 5xx and a stream cut off mid-answer are retried with exponential backoff; any
 * other 4xx fails at once with `MODEL_REQUEST_REJECTED`. Final failures are `MODEL_UNAVAILABLE`,
 * `MODEL_TIMEOUT`, `MODEL_RATE_LIMITED` or `MODEL_SERVER_ERROR`; a body that is too large, not
 * UTF-8, not a stream, or without text content fails with `MODEL_RESPONSE_TOO_LARGE` or
 * `MODEL_PROTOCOL_ERROR`. A redirect is refused. Aborting the run's signal cancels the request and
 * any wait with `RUN_ABORTED`. The API key (configured, or given to the call) never appears in an
 * answer or an error.
 *
 * A request that carries its decision contract (`ModelRequest.decision`, which runs add) asks for
 * the decision's strict JSON Schema (`decisionFormat`, default `json_schema`; a server that
 * refuses it gets `json_object` from then on, said once through `log`), or offers the allowed
 * tools as native functions (`protocol: "tools"`); the answer is returned as the decision JSON
 * text the core validates either way.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` for an unusable config (checked here, not per call).
 *
 * @example
 * ```ts
 * const model = createOpenAiChatModel({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.1' });
 * const { text, usage, attempts } = await model.complete(
 *   { traceId: 't-1', iteration: 1, messages: [{ role: 'user', content: 'Answer in JSON.' }] },
 *   AbortSignal.timeout(120_000),
 * );
 * ```
 */
export function createOpenAiChatModel(config: OpenAiChatModelConfig): ModelActor {
  // Checked now, so a config's errors come at build time; the streaming client comes with the first call.
  const { model } = checkSettings(config, OPENAI_EXAMPLE_URL);
  return lazyModel('openai', model, () => import('./openAiChatStream.js').then(({ openAiChatStream }) => openAiChatStream(config)));
}
