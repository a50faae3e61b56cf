import { ErrorCode, RedflowError } from '../../errors.js';
import type { ToolHttpConfig } from '../../contracts/schema-types.js';
import type { ToolDefinition } from '../tool.js';
import type { Settings } from './httpCall.js';

export type { HttpToolOutput } from './httpCall.js';
import { registerSecret } from '../../secrets/secrets.js';

/** Whole-call timeout of an HTTP tool (all redirect hops and the body) when `timeoutMs` is not set. */
export const DEFAULT_HTTP_TOOL_TIMEOUT_MS = 10_000;

/** Largest response body an HTTP tool reads when `maxResponseBytes` is not set: 1 MiB. */
export const DEFAULT_HTTP_TOOL_MAX_RESPONSE_BYTES = 1024 * 1024;

/** The header carrying a call's idempotency key when `idempotencyHeader` is not set. */
export const DEFAULT_IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** Redirects followed before a call fails with `TOOL_FAILED`. */
export const MAX_HTTP_TOOL_REDIRECTS = 5;

/** Options of {@link createHttpTool}. */
export interface HttpToolOptions {
  /** The fetch to use (tests, proxies). Default: the global `fetch`, looked up at call time. */
  readonly fetch?: typeof fetch;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
/** `${env:NAME}` in a header value: replaced by the environment variable at each call. */
const ENV_REFERENCE = /\$\{env:([^}]*)\}/g;
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
    // The request's code loads at the first call: a run that never calls an HTTP tool (and
    // `import 'redflow'`) does without it.
    execute: async (input, context) => (await import('./httpCall.js')).callHttp(config, settings, method, input, context, options.fetch ?? globalThis.fetch),
  };
}

/**
 * A `TOOL_CONFIG_INVALID` error about an HTTP tool's node.
 *
 * @example
 * ```ts
 * throw configError(`${label}: method must be GET, POST, PUT, PATCH or DELETE`, '/method');
 * ```
 */
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
  return {
    allowedHosts,
    timeoutMs,
    maxResponseBytes,
    idempotencyHeader,
    sendsBody: method !== 'GET' && method !== 'DELETE',
    maxRedirects: MAX_HTTP_TOOL_REDIRECTS,
    headersNow: () => headersNow(config.headers ?? {}, label),
  };
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

/**
 * Registers a credential header's value (and what follows `Bearer `/`Basic `) as a secret.
 *
 * @example
 * ```ts
 * registerHeaderSecret('authorization', 'Bearer abc'); // 'Bearer abc' and 'abc' are redacted from now on
 * ```
 */
function registerHeaderSecret(name: string, value: string): void {
  if (!SECRET_HEADER.test(name)) return;
  registerSecret(value);
  registerSecret(AUTH_CREDENTIALS.exec(value)?.[1]);
}

/** The headers with their `${env:NAME}` resolved now; see {@link Settings.headersNow}. */
function headersNow(given: Readonly<Record<string, string>>, label: string): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(given)) {
    const resolved = resolveEnv(value, name, label);
    registerHeaderSecret(name, resolved);
    try {
      headers.set(name, resolved);
    } catch {
      // The value is not repeated: it may hold a secret from the environment.
      throw configError(`${label}: header '${name}' has an invalid name or value`, `/headers/${name}`);
    }
  }
  return headers;
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
