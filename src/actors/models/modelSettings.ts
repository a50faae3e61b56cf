import type { ModelLlmConfig } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { RetryOptions } from '../retry.js';
import { redactSecrets, registerSecret } from '../../secrets/secrets.js';

/** Settings every HTTP model provider takes (see `createOpenAiChatModel`, `createAnthropicMessagesModel`). */
export interface ModelSettings {
  /** The server's API root, e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, `https://api.anthropic.com`. */
  readonly baseUrl: string;
  /** The model name the server knows, e.g. `gpt-4o-mini`, `llama3.1`, `claude-sonnet-4-5`. */
  readonly model: string;
  /** The key sent with every call (unless a call brings its own). Local servers usually need none. */
  readonly apiKey?: string | undefined;
  readonly temperature?: number | undefined;
  /** Largest answer, in tokens. */
  readonly maxTokens?: number | undefined;
  /** Limit of one attempt (request and whole streamed answer), in ms. Default 60000. */
  readonly timeoutMs?: number | undefined;
  /** Retries after the first attempt for network errors, timeouts, 429 and 5xx. Default 3. */
  readonly maxRetries?: number | undefined;
  /** Largest response body read, in bytes. Default 4 MiB. */
  readonly maxResponseBytes?: number | undefined;
  /** The fetch underneath the guards. Default the global one. */
  readonly fetch?: typeof fetch | undefined;
  /** Backoff settings (e.g. tiny delays in tests). `maxRetries` above wins over `retry.maxRetries`. */
  readonly retry?: Omit<RetryOptions, 'signal' | 'shouldRetry' | 'maxRetries'> | undefined;
  /**
   * How the model is held to the decision's shape when a request carries its contract:
   * `json_schema` (default) the provider's constrained output, `json_object` any JSON object
   * (Chat Completions only), `none` the prompt alone. See docs/flows.md.
   */
  readonly decisionFormat?: DecisionFormat | undefined;
  /** `tools`: the allowed tools go as the provider's native tools; `json` (default): the decision as JSON text. */
  readonly protocol?: AnswerProtocol | undefined;
  /** Where a model says something once worth an operator's eye (a fallback). Default: stderr, redacted. */
  readonly log?: ((line: string) => void) | undefined;
}

/** The values of a model node's `decisionFormat`. */
export type DecisionFormat = NonNullable<ModelLlmConfig['decisionFormat']>;

/** The values of a model node's `protocol`. */
export type AnswerProtocol = NonNullable<ModelLlmConfig['protocol']>;

/** The default of {@link ModelSettings.log}: a line on stderr, cut of secrets. */
export const logToStderr = (line: string): void => void process.stderr.write(`${redactSecrets(line)}\n`);

/** Defaults of {@link ModelSettings}, defined once. */
export const MODEL_DEFAULTS = {
  timeoutMs: 60_000,
  maxRetries: 3,
  maxResponseBytes: 4 * 1024 * 1024,
} as const;

/** {@link ModelSettings} checked, with defaults applied. */
export interface CheckedSettings {
  /** The API root without a trailing slash or query. */
  readonly baseUrl: string;
  /** The query of `baseUrl` (e.g. Azure's `api-version`), sent with every request; undefined when none. */
  readonly query: Readonly<Record<string, string>> | undefined;
  /** Origin and path only: safe to show. */
  readonly shownUrl: string;
  readonly model: string;
  readonly apiKey: string | undefined;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly maxResponseBytes: number;
  readonly fetch: typeof fetch;
}

/** A `MODEL_CONFIG_INVALID` error. */
export function configError(message: string, hint: string, path?: string): RedflowError {
  return new RedflowError({ code: ErrorCode.MODEL_CONFIG_INVALID, message, hint, path });
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw configError(`${name} must be a positive number, got ${String(value)}`, `Fix "${name}" in the model config.`, `/${name}`);
  }
  return value;
}

const DECISION_FORMATS: readonly DecisionFormat[] = ['json_schema', 'json_object', 'none'];
const ANSWER_PROTOCOLS: readonly AnswerProtocol[] = ['json', 'tools'];

/** `MODEL_CONFIG_INVALID` unless `value` is unset or one of `choices`. */
function checkChoice(value: unknown, choices: readonly string[], name: string): void {
  if (value === undefined || (typeof value === 'string' && choices.includes(value))) return;
  throw configError(
    `${name} must be one of ${choices.map((choice) => `"${choice}"`).join(', ')}, got ${JSON.stringify(value)?.slice(0, 60) ?? typeof value}`,
    `Fix "${name}" in the model config (see docs/flows.md, "Decision format and native tool calling").`,
    `/${name}`,
  );
}

/** True when `key` can be sent in an HTTP header (visible ASCII, no spaces or line breaks). */
export function sendableKey(key: string): boolean {
  return /^[\x21-\x7e]+$/.test(key);
}

/**
 * Checks the settings every provider shares and registers the key as a secret of the process.
 *
 * @param exampleUrl an API root to suggest in messages about `baseUrl`.
 * @throws RedflowError `MODEL_CONFIG_INVALID`, never quoting the key.
 */
export function checkSettings(settings: ModelSettings, exampleUrl: string): CheckedSettings {
  if (typeof settings.model !== 'string' || settings.model.trim() === '') {
    throw configError('the model name is empty', 'Set "model" in the model config or export REDFLOW_MODEL.', '/model');
  }
  let url: URL;
  try {
    url = new URL(String(settings.baseUrl));
  } catch {
    throw configError(
      `baseUrl ${JSON.stringify(String(settings.baseUrl).slice(0, 200))} is not a URL`,
      `Use the server's API root, e.g. "${exampleUrl}".`,
      '/baseUrl',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw configError(`baseUrl must be http(s), got ${url.protocol}`, 'Use an http:// or https:// URL.', '/baseUrl');
  }
  if (url.username !== '' || url.password !== '') {
    throw configError(
      'baseUrl must not contain a user name or password',
      'Put the key in an environment variable (see apiKeyEnv) instead of the URL.',
      '/baseUrl',
    );
  }
  const root = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  const apiKey = settings.apiKey?.trim() || undefined;
  // Known to the process from now on, so nothing it records or sends can show it.
  registerSecret(apiKey);
  if (apiKey !== undefined && !sendableKey(apiKey)) {
    // Never echo the key: fetch would put it into its "invalid header value" message.
    throw configError(
      'the API key contains characters that cannot be sent in an HTTP header',
      'Check the environment variable holding the key (stray quotes, spaces or line breaks?).',
      '/apiKeyEnv',
    );
  }
  const fetchImpl = settings.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    throw configError('no fetch implementation available', 'Run on Node.js 20 or newer.');
  }
  checkChoice(settings.decisionFormat, DECISION_FORMATS, 'decisionFormat');
  checkChoice(settings.protocol, ANSWER_PROTOCOLS, 'protocol');
  const maxRetries = settings.maxRetries ?? MODEL_DEFAULTS.maxRetries;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw configError(`maxRetries must be an integer ≥ 0, got ${String(maxRetries)}`, 'Fix "maxRetries" in the model config.', '/maxRetries');
  }
  return {
    baseUrl: root,
    query: url.search === '' ? undefined : Object.fromEntries(url.searchParams),
    shownUrl: root,
    model: settings.model.trim(),
    apiKey,
    timeoutMs: positive(settings.timeoutMs, MODEL_DEFAULTS.timeoutMs, 'timeoutMs'),
    maxRetries,
    maxResponseBytes: positive(settings.maxResponseBytes, MODEL_DEFAULTS.maxResponseBytes, 'maxResponseBytes'),
    fetch: fetchImpl,
  };
}

/** Picks the first value that is a non-blank string, trimmed. */
export function firstSet(...values: (string | undefined)[]): string | undefined {
  for (const value of values) if (typeof value === 'string' && value.trim() !== '') return value.trim();
  return undefined;
}

/** Whether `baseUrl`'s host is `host` (case-insensitive); false for what is not a URL. */
export function hostIs(baseUrl: string, host: string): boolean {
  try {
    return new URL(baseUrl).hostname.toLowerCase() === host;
  } catch {
    // Not a URL: checkSettings reports that, with its own code.
    return false;
  }
}

/** How a model is resolved when its key will come with each request rather than from the environment. */
export interface ResolveOptions {
  /** The key comes with the request (`ModelCallOptions.apiKey`): a missing `$<apiKeyEnv>` is no error. */
  readonly keyGiven?: boolean | undefined;
}

/** The model name from the node or `$REDFLOW_MODEL`, or `MODEL_CONFIG_INVALID`. */
export function requireModelName(nodeConfig: ModelLlmConfig, env: NodeJS.ProcessEnv, examples: string): string {
  const model = firstSet(nodeConfig.model, env.REDFLOW_MODEL);
  if (model === undefined) {
    throw configError(
      'no model name: the model node has no "model" and $REDFLOW_MODEL is not set',
      `Set "model" in the model node's config (e.g. ${examples}) or export REDFLOW_MODEL.`,
      '/model',
    );
  }
  return model;
}

/** Copies the tuning options every provider takes from a node's config. */
export function copyTuning(nodeConfig: ModelLlmConfig, config: { -readonly [K in keyof ModelSettings]: ModelSettings[K] }): void {
  if (nodeConfig.temperature !== undefined) config.temperature = nodeConfig.temperature;
  if (nodeConfig.maxTokens !== undefined) config.maxTokens = nodeConfig.maxTokens;
  if (nodeConfig.timeoutMs !== undefined) config.timeoutMs = nodeConfig.timeoutMs;
  if (nodeConfig.maxRetries !== undefined) config.maxRetries = nodeConfig.maxRetries;
  if (nodeConfig.maxResponseBytes !== undefined) config.maxResponseBytes = nodeConfig.maxResponseBytes;
  if (nodeConfig.decisionFormat !== undefined) config.decisionFormat = nodeConfig.decisionFormat;
  if (nodeConfig.protocol !== undefined) config.protocol = nodeConfig.protocol;
}

/** The `MODEL_KEY_MISSING` error for a provider's API that needs a key. */
export function missingKeyError(apiKeyEnv: string, baseUrl: string, alternative: string): RedflowError {
  return new RedflowError({
    code: ErrorCode.MODEL_KEY_MISSING,
    message: `no API key: ${baseUrl} needs one and $${apiKeyEnv} is not set`,
    hint: `export ${apiKeyEnv}=<your key> where the model runs (the embedded run, or the model worker), ${alternative}`,
    path: '/apiKeyEnv',
  });
}
