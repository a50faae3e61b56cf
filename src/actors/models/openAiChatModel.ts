import type { ModelLlmConfig, TokenUsage } from '../../contracts/schema-types.js';
import { ErrorCode, RedflowError, type ErrorInfo } from '../../errors.js';
import type { ModelActor, ModelAnswer, ModelRequest } from '../model.js';
import { abortError, retryWithBackoff, type RetryOptions } from '../retry.js';
import { startDeadline } from '../deadline.js';
import { readCappedBody, type CappedBody } from '../httpBody.js';
import { redactSecrets, registerSecret } from '../../secrets.js';

/** Settings of {@link createOpenAiChatModel}. */
export interface OpenAiChatModelConfig {
  /** The server's OpenAI-compatible API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  readonly baseUrl: string;
  /** The model name the server knows, e.g. `gpt-4o-mini`, `llama3.1`. */
  readonly model: string;
  /** Sent as `Authorization: Bearer …` when set. Local servers (Ollama, llama.cpp) usually need none. */
  readonly apiKey?: string | undefined;
  readonly temperature?: number | undefined;
  /** Sent as `max_tokens`. */
  readonly maxTokens?: number | undefined;
  /** Limit of one attempt (request and whole body), in ms. Default 60000. */
  readonly timeoutMs?: number | undefined;
  /** Retries after the first attempt for network errors, timeouts, 429 and 5xx. Default 3. */
  readonly maxRetries?: number | undefined;
  /** Ask for a JSON object (`response_format: {type: 'json_object'}`). Default true. */
  readonly jsonMode?: boolean | undefined;
  /** Largest response body read, in bytes. Default 4 MiB. */
  readonly maxResponseBytes?: number | undefined;
  /** The fetch to use. Default the global one. */
  readonly fetch?: typeof fetch | undefined;
  /** Backoff settings (e.g. tiny delays in tests). `maxRetries` above wins over `retry.maxRetries`. */
  readonly retry?: Omit<RetryOptions, 'signal' | 'shouldRetry' | 'maxRetries'> | undefined;
}

/** Defaults of {@link OpenAiChatModelConfig}, defined once. */
export const OPENAI_DEFAULTS = {
  baseUrl: 'https://api.openai.com/v1',
  apiKeyEnv: 'OPENAI_API_KEY',
  timeoutMs: 60_000,
  maxRetries: 3,
  maxResponseBytes: 4 * 1024 * 1024,
} as const;

/** Where local servers listen by default, for a model node that names one as its provider. */
export const LOCAL_SERVER_BASE_URLS = {
  ollama: 'http://127.0.0.1:11434/v1',
  vllm: 'http://127.0.0.1:8000/v1',
  llamacpp: 'http://127.0.0.1:8080/v1',
} as const;

/** Error bodies are only read for their message; this much is plenty. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Longest server message quoted in an error. */
const MAX_QUOTED_CHARS = 300;

/** A retryable failure of one attempt; `retryAfterMs` comes from HTTP `Retry-After`. */
class AttemptError extends RedflowError {
  readonly retryAfterMs: number | undefined;

  constructor(info: ErrorInfo, retryAfterMs?: number) {
    super(info);
    this.retryAfterMs = retryAfterMs;
  }
}

function configError(message: string, hint: string, path?: string): RedflowError {
  return new RedflowError({ code: ErrorCode.MODEL_CONFIG_INVALID, message, hint, path });
}

/** Picks the first value that is a non-blank string. */
function firstSet(...values: (string | undefined)[]): string | undefined {
  for (const value of values) if (typeof value === 'string' && value.trim() !== '') return value.trim();
  return undefined;
}

/**
 * Turns a model node's `llm` config plus the environment into {@link OpenAiChatModelConfig}:
 * `baseUrl` from the node, `$REDFLOW_MODEL_BASE_URL`, `$OPENAI_BASE_URL`, the local default of an
 * `ollama`/`vllm`/`llamacpp` provider, or OpenAI's; the API key
 * from `$<apiKeyEnv>` (default `$OPENAI_API_KEY`), absent when unset; `model` from the node or
 * `$REDFLOW_MODEL`. Blank values count as unset.
 *
 * @throws RedflowError `MODEL_CONFIG_INVALID` when no model name is given anywhere;
 *   `MODEL_KEY_MISSING` when the server is OpenAI's and the key's variable is not set (see
 *   {@link needsApiKey}), so a run without one stops before any request instead of retrying.
 *
 * @example
 * ```ts
 * const model = createOpenAiChatModel(resolveOpenAiConfig({ model: 'llama3.1', baseUrl: 'http://127.0.0.1:11434/v1' }, process.env));
 * ```
 */
export function resolveOpenAiConfig(nodeConfig: ModelLlmConfig, env: NodeJS.ProcessEnv): OpenAiChatModelConfig {
  const baseUrl =
    firstSet(nodeConfig.baseUrl, env.REDFLOW_MODEL_BASE_URL, env.OPENAI_BASE_URL) ??
    LOCAL_SERVER_BASE_URLS[nodeConfig.provider as keyof typeof LOCAL_SERVER_BASE_URLS] ??
    OPENAI_DEFAULTS.baseUrl;
  const model = firstSet(nodeConfig.model, env.REDFLOW_MODEL);
  if (model === undefined) {
    throw configError(
      'no model name: the model node has no "model" and $REDFLOW_MODEL is not set',
      'Set "model" in the model node\'s config (e.g. "gpt-4o-mini", or "llama3.1" for Ollama) or export REDFLOW_MODEL.',
      '/model',
    );
  }
  const apiKeyEnv = nodeConfig.apiKeyEnv ?? OPENAI_DEFAULTS.apiKeyEnv;
  const apiKey = firstSet(env[apiKeyEnv]);
  if (apiKey === undefined && needsApiKey(baseUrl)) throw missingKeyError(apiKeyEnv, baseUrl);
  const config: {
    -readonly [K in keyof OpenAiChatModelConfig]: OpenAiChatModelConfig[K];
  } = { baseUrl, model };
  if (apiKey !== undefined) config.apiKey = apiKey;
  if (nodeConfig.temperature !== undefined) config.temperature = nodeConfig.temperature;
  if (nodeConfig.maxTokens !== undefined) config.maxTokens = nodeConfig.maxTokens;
  if (nodeConfig.timeoutMs !== undefined) config.timeoutMs = nodeConfig.timeoutMs;
  if (nodeConfig.maxRetries !== undefined) config.maxRetries = nodeConfig.maxRetries;
  if (nodeConfig.jsonMode !== undefined) config.jsonMode = nodeConfig.jsonMode;
  if (nodeConfig.maxResponseBytes !== undefined) config.maxResponseBytes = nodeConfig.maxResponseBytes;
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
  try {
    return new URL(baseUrl).hostname.toLowerCase() === OPENAI_API_HOST;
  } catch {
    // Not a URL: createOpenAiChatModel reports that, with its own code.
    return false;
  }
}

function missingKeyError(apiKeyEnv: string, baseUrl: string): RedflowError {
  return new RedflowError({
    code: ErrorCode.MODEL_KEY_MISSING,
    message: `no API key: ${baseUrl} needs one and $${apiKeyEnv} is not set`,
    hint: `export ${apiKeyEnv}=<your key> where the model runs (the embedded run, or the model worker), or point the model node's "baseUrl" (or $OPENAI_BASE_URL) at a server that needs none, such as Ollama`,
    path: '/apiKeyEnv',
  });
}

/** Parses `Retry-After`: delay-seconds or an HTTP date. Returns ms, or undefined when unusable. */
function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Everything the attempts of one model share. */
interface Resolved {
  readonly endpoint: string;
  /** Origin and path only: safe to show. */
  readonly shownUrl: string;
  readonly model: string;
  readonly apiKey: string | undefined;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly maxResponseBytes: number;
  readonly fetch: typeof fetch;
  /** Cuts the key (whatever its length) and every other secret of the process out of error text. */
  readonly redact: (text: string) => string;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw configError(`${name} must be a positive number, got ${String(value)}`, `Fix "${name}" in the model config.`, `/${name}`);
  }
  return value;
}

function resolve(config: OpenAiChatModelConfig): Resolved {
  if (typeof config.model !== 'string' || config.model.trim() === '') {
    throw configError('the model name is empty', 'Set "model" in the model config or export REDFLOW_MODEL.', '/model');
  }
  let url: URL;
  try {
    url = new URL(String(config.baseUrl));
  } catch {
    throw configError(
      `baseUrl ${JSON.stringify(String(config.baseUrl).slice(0, 200))} is not a URL`,
      'Use the server\'s API root, e.g. "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1".',
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
  const apiKey = config.apiKey?.trim() || undefined;
  // Known to the process from now on, so nothing it records or sends can show it.
  registerSecret(apiKey);
  if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey)) {
    // Never echo the key: fetch would put it into its "invalid header value" message.
    throw configError(
      'the API key contains characters that cannot be sent in an HTTP header',
      'Check the environment variable holding the key (stray quotes, spaces or line breaks?).',
      '/apiKeyEnv',
    );
  }
  const fetchImpl = config.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    throw configError('no fetch implementation available', 'Run on Node.js 20 or newer.');
  }
  const maxRetries = config.maxRetries ?? OPENAI_DEFAULTS.maxRetries;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw configError(`maxRetries must be an integer ≥ 0, got ${String(maxRetries)}`, 'Fix "maxRetries" in the model config.', '/maxRetries');
  }
  return {
    endpoint: `${root}/chat/completions${url.search}`,
    shownUrl: root,
    model: config.model.trim(),
    apiKey,
    timeoutMs: positive(config.timeoutMs, OPENAI_DEFAULTS.timeoutMs, 'timeoutMs'),
    maxRetries,
    maxResponseBytes: positive(config.maxResponseBytes, OPENAI_DEFAULTS.maxResponseBytes, 'maxResponseBytes'),
    fetch: fetchImpl,
    redact: apiKey === undefined ? redactSecrets : (text) => redactSecrets(text.split(apiKey).join('[redacted]')),
  };
}

/** Shortens and cleans text quoted from a server. */
function quote(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return clean.length > MAX_QUOTED_CHARS ? `${clean.slice(0, MAX_QUOTED_CHARS)}…` : clean;
}

/** Describes a fetch rejection (undici hides the useful part in `cause`). */
function describeNetworkError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      parts.push(typeof code === 'string' ? `${code}: ${current.message}` : current.message);
      current = current.cause;
    } else {
      parts.push(String(current));
      break;
    }
  }
  return parts.filter((part, index) => part !== '' && parts.indexOf(part) === index).join(' / ') || 'unknown error';
}


/** The server's own explanation in an error body: OpenAI's `{error:{message}}`, or `{error:"…"}`. */
function serverMessage(bytes: Uint8Array): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8').decode(bytes));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const error = (parsed as { error?: unknown }).error;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  const message = (parsed as { message?: unknown }).message;
  return typeof message === 'string' ? message : undefined;
}

function rejectedHint(status: number, shownUrl: string, model: string): string {
  switch (status) {
    case 401:
    case 403:
      return 'Check the API key: it is read from $OPENAI_API_KEY or the variable named by the node\'s apiKeyEnv.';
    case 404:
      return `Check baseUrl (${shownUrl}, usually ending in /v1) and that the server serves the model "${model}".`;
    case 413:
      return 'The conversation is too large for the server; lower maxIterations or the memory\'s maxTurns.';
    default:
      return `Check the model name ("${model}"), temperature and maxTokens; if the server does not support JSON mode, set "jsonMode": false.`;
  }
}

/** Maps the token counts of a completion, when the server sent them. */
function toUsage(usage: unknown): TokenUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = usage as Record<string, unknown>;
  const count = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0;
  if (!count(prompt) || !count(completion)) return undefined;
  return { promptTokens: prompt, completionTokens: completion, totalTokens: count(total) ? total : prompt + completion };
}

/** Extracts the answer text and usage from a 2xx body, or fails with `MODEL_PROTOCOL_ERROR`. */
function parseCompletion(bytes: Uint8Array, r: Resolved): { text: string; usage: TokenUsage | undefined } {
  const protocolError = (message: string, hint: string): RedflowError =>
    new RedflowError({ code: ErrorCode.MODEL_PROTOCOL_ERROR, message: r.redact(message), hint: r.redact(hint) });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw protocolError(
      `${r.shownUrl} answered with a body that is not valid UTF-8 (${bytes.byteLength} bytes)`,
      'The server is not speaking the Chat Completions protocol; check baseUrl.',
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const sse = /^\s*data:/.test(text);
    throw protocolError(
      `${r.shownUrl} answered with a body that is not JSON: ${JSON.stringify(quote(text.slice(0, 120)))}`,
      sse
        ? 'The server streamed its answer although Redflow asked for stream:false; use a server that supports non-streaming Chat Completions.'
        : 'Check baseUrl: it must be the OpenAI-compatible API root (usually ending in /v1), not a web page or proxy.',
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw protocolError(`${r.shownUrl} answered with JSON that is not an object`, 'Check baseUrl.');
  }
  const body = parsed as { choices?: unknown; usage?: unknown; error?: unknown };
  if (body.error !== undefined && body.choices === undefined) {
    const message = serverMessage(new TextEncoder().encode(text));
    throw protocolError(
      `${r.shownUrl} answered HTTP 2xx with an error${message === undefined ? '' : `: ${quote(message)}`}`,
      'The server or a proxy in front of it reported a failure; check its logs.',
    );
  }
  const first: unknown = Array.isArray(body.choices) ? body.choices[0] : undefined;
  const message: unknown = typeof first === 'object' && first !== null ? (first as { message?: unknown }).message : undefined;
  const content: unknown = typeof message === 'object' && message !== null ? (message as { content?: unknown }).content : undefined;
  if (typeof content !== 'string') {
    const toolCalls = typeof message === 'object' && message !== null && 'tool_calls' in message;
    throw protocolError(
      toolCalls
        ? `the model answered with tool_calls and no text content`
        : `the completion has no choices[0].message.content string`,
      toolCalls
        ? 'Redflow expects the JSON answer as message content; do not configure native tools on the server for this model.'
        : 'The server is not speaking the Chat Completions protocol as expected; check baseUrl and the server version.',
    );
  }
  // A proxy (buggy or hostile) may echo the key into the answer: in distributed mode only this
  // process knows the key, so it is cut here, before the answer leaves. Usage holds only numbers.
  return { text: redactSecrets(content), usage: toUsage(body.usage) };
}

/** One HTTP attempt: throws an {@link AttemptError} (retryable) or a final `RedflowError`. */
async function attemptOnce(r: Resolved, body: string, runSignal: AbortSignal): Promise<{ text: string; usage: TokenUsage | undefined }> {
  const deadline = startDeadline(runSignal, r.timeoutMs);

  /** The error for a transport failure at any point of the attempt. */
  const transportError = (error: unknown, stage: string): RedflowError => {
    if (runSignal.aborted) return abortError(runSignal, 'the model request');
    if (deadline.timedOut()) {
      return new AttemptError({
        code: ErrorCode.MODEL_TIMEOUT,
        message: `${r.shownUrl} did not answer within ${r.timeoutMs} ms`,
        hint: 'The model may be slow or overloaded (a local model may still be loading); raise timeoutMs or use a smaller model.',
        retryable: true,
      });
    }
    return new AttemptError({
      code: ErrorCode.MODEL_UNAVAILABLE,
      message: r.redact(`cannot reach ${r.shownUrl} (${stage}): ${quote(describeNetworkError(error))}`),
      hint: `Check baseUrl (${r.shownUrl}) and that the model server is running and reachable (e.g. \`ollama serve\`).`,
      retryable: true,
    });
  };

  try {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (r.apiKey !== undefined) headers.authorization = `Bearer ${r.apiKey}`;
    let response: Response;
    try {
      response = await r.fetch(r.endpoint, {
        method: 'POST',
        headers,
        body,
        signal: deadline.signal,
        // A redirect could carry the key to another host; report it instead of following it.
        redirect: 'manual',
      });
    } catch (error) {
      throw transportError(error, 'request');
    }

    const { status } = response;
    if (status < 200 || status >= 300) {
      let bytes: Uint8Array = new Uint8Array(0);
      try {
        bytes = (await readCappedBody(response, Math.min(MAX_ERROR_BODY_BYTES, r.maxResponseBytes))).bytes;
      } catch {
        if (runSignal.aborted) throw abortError(runSignal, 'the model request');
        // The status says enough.
      }
      const said = serverMessage(bytes);
      const detail = said === undefined ? '' : `: ${quote(said)}`;
      if (status === 429) {
        const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), Date.now());
        throw new AttemptError(
          {
            code: ErrorCode.MODEL_RATE_LIMITED,
            message: r.redact(`${r.shownUrl} answered HTTP 429 (rate limited)${detail}`),
            hint: 'You are over the provider\'s rate limit or quota: wait, lower the request rate, or check your plan.',
            retryable: true,
          },
          retryAfterMs,
        );
      }
      if (status >= 500) {
        throw new AttemptError({
          code: ErrorCode.MODEL_SERVER_ERROR,
          message: r.redact(`${r.shownUrl} answered HTTP ${status}${detail}`),
          hint: 'The model server failed; check its status or logs and try again later.',
          retryable: true,
        });
      }
      if (status >= 300 && status < 400) {
        const location = response.headers.get('location');
        let shownLocation = '';
        if (location !== null) {
          try {
            const target = new URL(location, r.endpoint);
            shownLocation = ` to ${target.origin}${target.pathname}`;
          } catch {
            // Unparsable Location: leave it out.
          }
        }
        throw new RedflowError({
          code: ErrorCode.MODEL_REQUEST_REJECTED,
          message: r.redact(`${r.shownUrl} answered HTTP ${status} (redirect${shownLocation})`),
          hint: 'Redflow does not follow redirects (they could carry the API key elsewhere); set baseUrl to the final URL.',
        });
      }
      if (status >= 400) {
        throw new RedflowError({
          code: ErrorCode.MODEL_REQUEST_REJECTED,
          message: r.redact(`${r.shownUrl} rejected the request with HTTP ${status}${detail}`),
          hint: r.redact(rejectedHint(status, r.shownUrl, r.model)),
        });
      }
      throw new RedflowError({
        code: ErrorCode.MODEL_PROTOCOL_ERROR,
        message: `${r.shownUrl} answered with unexpected HTTP status ${status}`,
        hint: 'Check baseUrl: it must be an OpenAI-compatible API root.',
      });
    }

    const tooLarge = (): RedflowError =>
      new RedflowError({
        code: ErrorCode.MODEL_RESPONSE_TOO_LARGE,
        message: `${r.shownUrl} sent a response larger than ${r.maxResponseBytes} bytes`,
        hint: `Lower "maxTokens", or raise "maxResponseBytes" in the model node's config (now ${r.maxResponseBytes}) if such large answers are expected.`,
      });
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > r.maxResponseBytes) {
      response.body?.cancel().catch(() => {});
      throw tooLarge();
    }
    let result: CappedBody;
    try {
      result = await readCappedBody(response, r.maxResponseBytes);
    } catch (error) {
      throw transportError(error, 'reading the response');
    }
    if (result.truncated) throw tooLarge();
    return parseCompletion(result.bytes, r);
  } finally {
    deadline.dispose();
  }
}

/**
 * A model actor for any OpenAI-compatible Chat Completions server: OpenAI, Ollama, vLLM,
 * llama.cpp's server, …
 *
 * Each call POSTs `{model, messages, stream: false, …}` to `<baseUrl>/chat/completions`. Network
 * errors, per-attempt timeouts, HTTP 429 (honouring `Retry-After`) and 5xx are retried with
 * exponential backoff; any other 4xx fails at once with `MODEL_REQUEST_REJECTED`. Final failures
 * are `MODEL_UNAVAILABLE`, `MODEL_TIMEOUT`, `MODEL_RATE_LIMITED` or `MODEL_SERVER_ERROR`; a body that
 * is too large, not UTF-8, not JSON or without text content fails with `MODEL_RESPONSE_TOO_LARGE` or
 * `MODEL_PROTOCOL_ERROR`. Aborting the run's signal cancels the request and any wait with
 * `RUN_ABORTED`. The API key never appears in an error.
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
  const r = resolve(config);
  const jsonMode = config.jsonMode ?? true;
  const retry = config.retry ?? {};

  return {
    kind: 'openai',
    async complete(request: ModelRequest, signal: AbortSignal): Promise<ModelAnswer> {
      if (signal.aborted) throw abortError(signal, 'the model request');
      const payload: Record<string, unknown> = {
        model: r.model,
        messages: request.messages.map(({ role, content }) => ({ role, content })),
        stream: false,
      };
      if (config.temperature !== undefined) payload.temperature = config.temperature;
      if (config.maxTokens !== undefined) payload.max_tokens = config.maxTokens;
      if (jsonMode) payload.response_format = { type: 'json_object' };
      const body = JSON.stringify(payload);

      let attemptsMade = 0;
      try {
        const { value, attempts } = await retryWithBackoff(
          (n) => {
            attemptsMade = n;
            return attemptOnce(r, body, signal);
          },
          { ...retry, maxRetries: r.maxRetries, signal },
        );
        return value.usage === undefined ? { text: value.text, attempts } : { text: value.text, usage: value.usage, attempts };
      } catch (error) {
        if (signal.aborted) throw abortError(signal, 'the model request');
        if (error instanceof AttemptError) {
          // Rethrow as a plain RedflowError that says how hard we tried.
          const info = error.toInfo();
          throw new RedflowError({
            ...info,
            message: `${info.message} (gave up after ${attemptsMade} attempt${attemptsMade === 1 ? '' : 's'})`,
          });
        }
        throw error;
      }
    },
  };
}
