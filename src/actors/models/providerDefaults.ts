import type { ModelSettings } from './modelSettings.js';

// The settings and defaults of the two protocols' model actors, which both their light halves
// (openAiChatModel.ts, anthropicMessagesModel.ts: config, checks) and their streaming halves
// (loaded with the first call) use.

/** Settings of `createOpenAiChatModel`. */
export interface OpenAiChatModelConfig extends ModelSettings {
  /** Ask for a JSON object (`response_format: {type: 'json_object'}`). Default true. */
  readonly jsonMode?: boolean | undefined;
}

/** Defaults of {@link OpenAiChatModelConfig}, defined once. */
export const OPENAI_DEFAULTS = {
  baseUrl: 'https://api.openai.com/v1',
  apiKeyEnv: 'OPENAI_API_KEY',
} as const;

/** The API roots suggested when an OpenAI-compatible `baseUrl` is not one. */
export const OPENAI_EXAMPLE_URL = 'https://api.openai.com/v1" or "http://127.0.0.1:11434/v1';

/** Settings of `createAnthropicMessagesModel`. `maxTokens` defaults to {@link ANTHROPIC_DEFAULTS.maxTokens} (the API requires one). */
export type AnthropicMessagesModelConfig = ModelSettings;

/** Defaults of {@link AnthropicMessagesModelConfig}, defined once. */
export const ANTHROPIC_DEFAULTS = {
  /** The API root: the library adds `/v1/messages`. */
  baseUrl: 'https://api.anthropic.com',
  apiKeyEnv: 'ANTHROPIC_API_KEY',
  /** The Messages API requires `max_tokens`; a ReAct step's JSON answer fits well within this. */
  maxTokens: 4096,
} as const;
