import { abortedByRun, startDeadline } from '../deadline.js';
import { readCappedBody, type CappedBody } from '../httpBody.js';
import { ErrorCode, RedflowError } from '../../errors.js';
import type { ToolHttpConfig } from '../../contracts/schema-types.js';
import type { ToolContext } from '../tool.js';

// An HTTP tool's call, loaded at its first call (see createHttpTool): the URL expanded from the
// input and checked, the request and its redirects, the response read within its limits.

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

/**
 * An HTTP tool's settings, checked when the tool is made (see createHttpTool).
 *
 * @example
 * ```ts
 * const headers = settings.headersNow();
 * if (settings.idempotencyHeader !== undefined) headers.set(settings.idempotencyHeader, context.idempotencyKey);
 * ```
 */
export interface Settings {
  readonly allowedHosts: readonly string[];
  /** The header carrying the call's idempotency key, or undefined to send none. */
  readonly idempotencyHeader: string | undefined;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly sendsBody: boolean;
  /** Redirects followed at most. */
  readonly maxRedirects: number;
  /**
   * The node's headers as of now: each `${env:NAME}` replaced by the environment variable (read at
   * each call), credential values registered as secrets. Throws `TOOL_CONFIG_INVALID` for a
   * variable that is not set or a header that is not valid.
   */
  readonly headersNow: () => Headers;
}

const PLACEHOLDER = /\{([^{}]+)\}/g;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Bytes of an error response kept for the excerpt in `TOOL_HTTP_STATUS`. */
const ERROR_BODY_BYTES = 4096;
const ERROR_EXCERPT_CHARS = 200;
/** Headers not carried to another origin when a redirect leaves the first one. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];

/**
 * One call: expand, check, request (following redirects), read, interpret.
 *
 * @example
 * ```ts
 * const output = await callHttp(config, settings, 'GET', { city: 'Paris' }, context, fetch);
 * ```
 */
export async function callHttp(
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

  const headers = settings.headersNow();
  if (settings.idempotencyHeader !== undefined) headers.set(settings.idempotencyHeader, context.idempotencyKey);
  let body: string | undefined;
  if (settings.sendsBody) {
    body = JSON.stringify(rest);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }

  if (context.signal.aborted) throw abortedByRun(label);
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
      if (redirects >= settings.maxRedirects) {
        throw new RedflowError({
          code: ErrorCode.TOOL_FAILED,
          message: `${label}: more than ${settings.maxRedirects} redirects, last to ${redactUrl(location, current)}`,
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
    if (context.signal.aborted) throw abortedByRun(label);
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
