import { startDeadline } from '../deadline.js';
import { readCappedBody, type CappedBody } from '../httpBody.js';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { ToolHttpConfig } from '../../contracts/schema-types.js';
import type { ToolContext, ToolDefinition } from '../tool.js';
import { registerSecret } from '../../secrets/secrets.js';

/** Whole-call timeout of an HTTP tool (all redirect hops and the body) when `timeoutMs` is not set. */
export const DEFAULT_HTTP_TOOL_TIMEOUT_MS = 10_000;

/** Largest response body an HTTP tool reads when `maxResponseBytes` is not set: 1 MiB. */
export const DEFAULT_HTTP_TOOL_MAX_RESPONSE_BYTES = 1024 * 1024;

/** The header carrying a call's idempotency key when `idempotencyHeader` is not set. */
export const DEFAULT_IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Redirects followed before a call fails with `TOOL_FAILED`. */
export const MAX_HTTP_TOOL_REDIRECTS = 5;

/** What an HTTP tool returns to the model. */
export interface HttpToolOutput {
  /** The final response's HTTP status (always < 400: larger ones are thrown as `TOOL_HTTP_STATUS`). */
  readonly status: number;
  /** The `content-type` header, or `null` when the server sent none. */
  readonly contentType: string | null;
  /**
   * The parsed JSON value when the content type is JSON (`application/json` or `…+json`) and the
   * body parses; otherwise the body as text. Bytes that are not valid UTF-8 are decoded to U+FFFD
   * (the replacement character) rather than rejected.
   */
  readonly body: unknown;
}

/** Options of {@link createHttpTool}. */
export interface HttpToolOptions {
  /** The fetch to use (tests, proxies). Default: the global `fetch`, looked up at call time. */
  readonly fetch?: typeof fetch;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const PLACEHOLDER = /\{([^{}]+)\}/g;
const ENV_REFERENCE = /\$\{env:([^}]*)\}/g;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Bytes of an error response kept for the excerpt in `TOOL_HTTP_STATUS`. */
const ERROR_BODY_BYTES = 4096;
const ERROR_EXCERPT_CHARS = 200;
/** Headers not carried to another origin when a redirect leaves the first one. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];
/** Header names whose values are credentials: registered as secrets, so no log or answer shows them. */
const SECRET_HEADER = /auth|key|token|secret|password|cookie|session|credential|signature/i;
/** What `Authorization: <scheme> <credentials>` carries after its scheme. */
const AUTH_CREDENTIALS = /^[A-Za-z][A-Za-z0-9_-]*\s+(\S.*)$/;

/**
 * Builds a `tool.http` node's tool: each call expands the URL template with the model's input and
 * makes one HTTP request (plus redirects).
 *
 * - **URL template**: `{field}` is replaced by `encodeURIComponent(String(input.field))` (objects
 *   and arrays are JSON-encoded first); a missing (`undefined` or `null`) field fails the call with
 *   `TOOL_INPUT_INVALID`. Encoding keeps a value from adding `/`, `?`, `#` or `@`, but a value next
 *   to the host can still change it, which is why the host is checked after expansion.
 * - **Other input fields**: for GET and DELETE they become query parameters (objects and arrays
 *   JSON-encoded, `undefined` skipped); for POST, PUT and PATCH they are the JSON body.
 * - **Hosts**: the final URL's host (after expansion) and every redirect's host must be in
 *   `allowedHosts` (default: the template's own host, `host:port` when it has a port) and use
 *   `http:` or `https:`; otherwise `TOOL_HOST_NOT_ALLOWED`, before any request is sent. An entry
 *   without a port matches only the scheme's default port. A template whose host contains a
 *   placeholder needs an explicit `allowedHosts`.
 * - **Redirects** are followed by hand, at most {@link MAX_HTTP_TOOL_REDIRECTS}. A 303 (and a
 *   301/302 of a non-GET request) becomes a GET without body, as browsers do; `authorization`,
 *   `proxy-authorization` and `cookie` headers are dropped when a redirect changes origin.
 * - **Limits**: `timeoutMs` (default 10 s) covers the whole call → `TOOL_TIMEOUT`; the run's signal
 *   aborts it → `RUN_ABORTED`; a body over `maxResponseBytes` (default 1 MiB) → `TOOL_RESPONSE_TOO_LARGE`.
 * - **Status**: ≥ 400 → `TOOL_HTTP_STATUS` with the status and a short excerpt of the body
 *   (retryable for 408, 429 and 5xx). Network failures → `TOOL_FAILED` (retryable).
 * - **Headers**: `config.headers` are sent; `${env:NAME}` in a value is replaced by the environment
 *   variable at call time (missing → `TOOL_CONFIG_INVALID`). Values of credential headers
 *   (`authorization`, `cookie`, names with `key`, `token`, `secret`, …) are registered as secrets,
 *   so a server echoing them puts `[redacted]` in the log, never the value.
 * - **Idempotency**: each call sends its idempotency key (`<traceId>:<iteration>`, the same when the
 *   call is re-sent after a crash) in the header `idempotencyHeader` (default `Idempotency-Key`;
 *   `false` sends none), so an API that honours it makes the call's effect once.
 *
 * Configuration problems found here (bad name, method, URL, limits) throw `TOOL_CONFIG_INVALID`.
 * The output is an {@link HttpToolOutput}.
 *
 * @example
 * ```ts
 * const weather = createHttpTool({
 *   name: 'weather',
 *   url: 'https://api.example.com/v1/weather/{city}',
 *   headers: { authorization: 'Bearer ${env:WEATHER_TOKEN}' },
 *   inputSchema: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } },
 * });
 * await weather.execute({ city: 'Paris', units: 'metric' }, context);
 * // GET https://api.example.com/v1/weather/Paris?units=metric
 * // → { status: 200, contentType: 'application/json', body: { … } }
 * ```
 */
export function createHttpTool(config: ToolHttpConfig & { name: string }, options: HttpToolOptions = {}): ToolDefinition {
  const method = config.method ?? 'GET';
  const settings = checkConfig(config, method);
  const description = config.description ?? `${method} ${config.url}`;
  const inputSchema = config.inputSchema ?? { type: 'object' };

  return {
    name: config.name,
    description,
    inputSchema,
    execute: (input, context) => callHttp(config, settings, method, input, context, options.fetch ?? globalThis.fetch),
  };
}

interface Settings {
  readonly allowedHosts: readonly string[];
  /** The header carrying the call's idempotency key, or undefined to send none. */
  readonly idempotencyHeader: string | undefined;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly sendsBody: boolean;
}

function configError(message: string, path?: string, hint?: string): RedflowError {
  return new RedflowError({ code: ErrorCode.TOOL_CONFIG_INVALID, message, path, hint });
}

/** Checks what can be checked before any call and works out the allowed hosts. */
function checkConfig(config: ToolHttpConfig & { name: string }, method: string): Settings {
  const label = `http tool '${String(config.name)}'`;
  if (typeof config.name !== 'string' || !TOOL_NAME.test(config.name)) {
    throw configError(`${label}: name must be 1-64 letters, digits, '_' or '-'`, '/name');
  }
  if (!METHODS.has(method)) {
    throw configError(`${label}: method must be one of ${[...METHODS].join(', ')}, got ${method}`, '/method');
  }
  const timeoutMs = config.timeoutMs ?? DEFAULT_HTTP_TOOL_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw configError(`${label}: timeoutMs must be a positive number`, '/timeoutMs');
  }
  const maxResponseBytes = config.maxResponseBytes ?? DEFAULT_HTTP_TOOL_MAX_RESPONSE_BYTES;
  if (!Number.isFinite(maxResponseBytes) || maxResponseBytes <= 0) {
    throw configError(`${label}: maxResponseBytes must be a positive number`, '/maxResponseBytes');
  }

  // scheme://authority, found before any expansion so a placeholder cannot hide in it.
  const origin = /^([A-Za-z][A-Za-z0-9+.-]*:)\/\/([^/?#]*)/.exec(config.url);
  if (!origin) {
    throw configError(`${label}: url ${JSON.stringify(config.url)} must be an absolute http(s) URL`, '/url');
  }
  const scheme = origin[1]!.toLowerCase();
  if (scheme !== 'http:' && scheme !== 'https:') {
    throw configError(`${label}: url must use http: or https:, got ${scheme}`, '/url');
  }
  const authority = origin[2]!;

  let allowedHosts: string[];
  if (config.allowedHosts !== undefined) {
    allowedHosts = config.allowedHosts.map((host) => host.trim().toLowerCase()).filter((host) => host !== '');
  } else {
    if (authority.includes('{')) {
      throw configError(
        `${label}: the url's host contains a placeholder, so the allowed hosts cannot be inferred`,
        '/allowedHosts',
        'list the hosts the tool may call in "allowedHosts", e.g. ["api.example.com"]',
      );
    }
    let host: string;
    try {
      host = new URL(`${scheme}//${authority}/`).host;
    } catch {
      throw configError(`${label}: url ${JSON.stringify(config.url)} has an invalid host`, '/url');
    }
    allowedHosts = [host];
  }
  const idempotencyHeader = checkIdempotencyHeader(config, label);
  // Known as secrets before any call, so even a config error later cannot show them.
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    if (typeof value === 'string') registerHeaderSecret(name, value.replace(ENV_REFERENCE, (_, env: string) => process.env[env] ?? ''));
  }
  return { allowedHosts, timeoutMs, maxResponseBytes, idempotencyHeader, sendsBody: method !== 'GET' && method !== 'DELETE' };
}

/** The header name for the idempotency key, undefined when turned off; refuses one `headers` also sets. */
function checkIdempotencyHeader(config: ToolHttpConfig & { name: string }, label: string): string | undefined {
  const setting: unknown = config.idempotencyHeader ?? DEFAULT_IDEMPOTENCY_HEADER;
  if (setting === false) return undefined;
  if (typeof setting !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(setting)) {
    throw configError(`${label}: idempotencyHeader must be a header name or false`, '/idempotencyHeader', 'e.g. "Idempotency-Key" (the default), "X-Request-Id", or false to send none');
  }
  const clash = Object.keys(config.headers ?? {}).find((name) => name.toLowerCase() === setting.toLowerCase());
  if (clash !== undefined) {
    throw configError(
      `${label}: headers sets '${clash}', which carries each call's idempotency key`,
      `/headers/${clash}`,
      'remove it from "headers" (each call sends its own key), or set "idempotencyHeader" to another name or false',
    );
  }
  return setting;
}

/** Registers a credential header's value (and what follows `Bearer `/`Basic `) as a secret. */
function registerHeaderSecret(name: string, value: string): void {
  if (!SECRET_HEADER.test(name)) return;
  registerSecret(value);
  registerSecret(AUTH_CREDENTIALS.exec(value)?.[1]);
}

/** One call: expand, check, request (following redirects), read, interpret. */
async function callHttp(
  config: ToolHttpConfig & { name: string },
  settings: Settings,
  method: string,
  input: Record<string, unknown>,
  context: ToolContext,
  fetchImpl: typeof fetch,
): Promise<HttpToolOutput> {
  const label = `http tool '${config.name}'`;
  const { url, rest } = expandUrl(config.url, input, label);
  if (!settings.sendsBody) {
    for (const [key, value] of Object.entries(rest)) {
      if (value === undefined) continue;
      url.searchParams.append(key, typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value));
    }
  }
  checkHost(url, settings.allowedHosts, label);

  const headers = new Headers();
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    const resolved = resolveEnv(value, name, label);
    registerHeaderSecret(name, resolved);
    try {
      headers.set(name, resolved);
    } catch {
      // The value is not repeated: it may hold a secret from the environment.
      throw configError(`${label}: header '${name}' has an invalid name or value`, `/headers/${name}`);
    }
  }
  if (settings.idempotencyHeader !== undefined) headers.set(settings.idempotencyHeader, context.idempotencyKey);
  let body: string | undefined;
  if (settings.sendsBody) {
    body = JSON.stringify(rest);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }

  if (context.signal.aborted) throw abortedError(label);
  const deadline = startDeadline(context.signal, settings.timeoutMs);

  try {
    let current = url;
    let currentMethod = method;
    let response: Response;
    for (let redirects = 0; ; redirects++) {
      response = await fetchImpl(current, {
        method: currentMethod,
        headers,
        body,
        redirect: 'manual',
        signal: deadline.signal,
      });
      if (!REDIRECT_STATUSES.has(response.status)) break;
      const location = response.headers.get('location');
      if (location === null) break;
      await response.body?.cancel().catch(() => undefined);
      if (redirects >= MAX_HTTP_TOOL_REDIRECTS) {
        throw new RedflowError({
          code: ErrorCode.TOOL_FAILED,
          message: `${label}: more than ${MAX_HTTP_TOOL_REDIRECTS} redirects, last to ${redactUrl(location, current)}`,
        });
      }
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new RedflowError({
          code: ErrorCode.TOOL_FAILED,
          message: `${label}: the server redirected to an invalid URL ${JSON.stringify(location.slice(0, 200))}`,
        });
      }
      checkHost(next, settings.allowedHosts, label, current);
      if (next.origin !== current.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && currentMethod !== 'GET')) {
        currentMethod = 'GET';
        body = undefined;
        headers.delete('content-type');
      }
      current = next;
    }

    const contentType = response.headers.get('content-type');
    if (response.status >= 400) {
      const { bytes } = await readCapped(response, ERROR_BODY_BYTES, false, label);
      const text = new TextDecoder().decode(bytes).replace(/\s+/g, ' ').trim();
      const excerpt = text.length > ERROR_EXCERPT_CHARS ? `${text.slice(0, ERROR_EXCERPT_CHARS)}…` : text;
      throw new RedflowError({
        code: ErrorCode.TOOL_HTTP_STATUS,
        message: `${label}: ${currentMethod} ${redactUrl(current.href)} answered HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`,
        retryable: response.status === 408 || response.status === 429 || response.status >= 500,
      });
    }

    const { bytes } = await readCapped(response, settings.maxResponseBytes, true, label);
    const text = new TextDecoder().decode(bytes);
    return { status: response.status, contentType, body: parseBody(text, contentType) };
  } catch (error) {
    if (deadline.timedOut()) {
      throw new RedflowError(
        {
          code: ErrorCode.TOOL_TIMEOUT,
          message: `${label}: no complete answer within ${settings.timeoutMs} ms`,
          hint: 'raise the node\'s "timeoutMs" or check that the server is up',
          retryable: true,
        },
        { cause: error },
      );
    }
    if (context.signal.aborted) throw abortedError(label);
    if (error instanceof RedflowError) throw error;
    throw new RedflowError(
      {
        code: ErrorCode.TOOL_FAILED,
        message: `${label}: request failed: ${describeFetchError(error)}`,
        retryable: true,
      },
      { cause: error },
    );
  } finally {
    deadline.dispose();
  }
}

/** Replaces `{field}` placeholders; returns the URL and the input fields the template did not use. */
function expandUrl(
  template: string,
  input: Record<string, unknown>,
  label: string,
): { url: URL; rest: Record<string, unknown> } {
  const used = new Set<string>();
  const expanded = template.replace(PLACEHOLDER, (_, field: string) => {
    const value = Object.hasOwn(input, field) ? input[field] : undefined;
    if (value === undefined || value === null) {
      throw new RedflowError({
        code: ErrorCode.TOOL_INPUT_INVALID,
        message: `${label}: input field '${field}' is needed by the URL template but is missing`,
        path: `/${field}`,
      });
    }
    used.add(field);
    return encodeURIComponent(typeof value === 'object' ? JSON.stringify(value) : String(value));
  });
  let url: URL;
  try {
    url = new URL(expanded);
  } catch {
    throw new RedflowError({
      code: ErrorCode.TOOL_INPUT_INVALID,
      message: `${label}: the input makes the URL invalid`,
    });
  }
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) if (!used.has(key)) rest[key] = value;
  return { url, rest };
}

/** Throws `TOOL_HOST_NOT_ALLOWED` unless `url` is http(s) and its host is one of `allowed`. */
function checkHost(url: URL, allowed: readonly string[], label: string, from?: URL): void {
  const via = from ? ` (redirect from ${from.host})` : '';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RedflowError({
      code: ErrorCode.TOOL_HOST_NOT_ALLOWED,
      message: `${label}: scheme ${url.protocol} is not allowed${via}; only http: and https: are`,
    });
  }
  if (allowed.some((entry) => hostMatches(entry, url))) return;
  throw new RedflowError({
    code: ErrorCode.TOOL_HOST_NOT_ALLOWED,
    message: `${label}: host ${url.host} is not allowed${via} (allowed: ${allowed.length > 0 ? allowed.join(', ') : 'none'})`,
    hint: `add "${url.host}" to the node's "allowedHosts" if the tool may call it`,
  });
}

function hostMatches(entry: string, url: URL): boolean {
  if (entry === url.host) return true;
  // `host:443` for https (or `host:80` for http) names the default port, which URL leaves out.
  const defaultPort = url.protocol === 'https:' ? '443' : '80';
  return url.port === '' && entry === `${url.hostname}:${defaultPort}`;
}

/** Replaces `${env:NAME}` with the environment variable; never puts the value in a message. */
function resolveEnv(value: string, header: string, label: string): string {
  return value.replace(ENV_REFERENCE, (_, name: string) => {
    const resolved = process.env[name];
    if (resolved === undefined) {
      throw new RedflowError({
        code: ErrorCode.TOOL_CONFIG_INVALID,
        message: `${label}: header '${header}' uses environment variable ${name}, which is not set`,
        hint: `set ${name} in the environment of the process running the tool`,
        path: `/headers/${header}`,
      });
    }
    return resolved;
  });
}

/** Reads the body up to `limit` bytes; `strict` turns a longer body into TOOL_RESPONSE_TOO_LARGE. */
async function readCapped(
  response: Response,
  limit: number,
  strict: boolean,
  label: string,
): Promise<CappedBody> {
  const tooLarge = (): RedflowError =>
    new RedflowError({
      code: ErrorCode.TOOL_RESPONSE_TOO_LARGE,
      message: `${label}: the response is larger than ${limit} bytes`,
      hint: 'raise the node\'s "maxResponseBytes" or ask the server for less',
    });
  // A declared size over the limit is refused before reading anything.
  const declared = Number(response.headers.get('content-length'));
  if (strict && Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const body = await readCappedBody(response, limit);
  if (strict && body.truncated) throw tooLarge();
  return body;
}

/** JSON when the content type says so and the text parses; the text otherwise. */
function parseBody(text: string, contentType: string | null): unknown {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const isJson = mediaType === 'application/json' || mediaType.endsWith('+json');
  if (!isJson || text.trim() === '') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function abortedError(label: string): RedflowError {
  return new RedflowError({ code: ErrorCode.RUN_ABORTED, message: `${label}: aborted because the run was aborted` });
}

/** The URL without user info and query, which may carry secrets. */
function redactUrl(location: string, base?: URL): string {
  try {
    const url = new URL(location, base);
    return `${url.origin}${url.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const detail = cause instanceof Error ? cause.message : undefined;
  return detail && detail !== error.message ? `${error.message} (${detail})` : error.message;
}
