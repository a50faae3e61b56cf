import { ErrorCode, RedflowError, type ErrorInfo } from '../../errors.js';
import { findRedflowError } from './guardedFetch.js';

/** A retryable failure of one attempt; `retryAfterMs` comes from the server's `Retry-After`. */
export class AttemptError extends RedflowError {
  readonly retryAfterMs: number | undefined;

  constructor(info: ErrorInfo, retryAfterMs?: number) {
    super(info);
    this.retryAfterMs = retryAfterMs;
  }
}

/** What a failure's message and hint may say about the model it came from. */
export interface FailureContext {
  /** Origin and path of the server: safe to show. */
  readonly shownUrl: string;
  readonly model: string;
  /** What to check on a 401/403: where the key of this call came from. */
  readonly keyHint: string;
  /** What to check on a 404: the API root the provider expects. */
  readonly notFoundHint: string;
}

/** Longest server message quoted in an error. */
const MAX_QUOTED_CHARS = 300;

/** Shortens and cleans text quoted from a server. */
export function quote(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return clean.length > MAX_QUOTED_CHARS ? `${clean.slice(0, MAX_QUOTED_CHARS)}…` : clean;
}

/**
 * Parses `Retry-After` (delay-seconds or an HTTP date) or `retry-after-ms` from response headers.
 * Returns ms, or undefined when there is none or it is unusable.
 */
export function retryAfterMs(headers: unknown, now: number): number | undefined {
  if (!(headers instanceof Headers)) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms.trim());
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The server's own explanation in an error body, in the shapes servers use: OpenAI's and
 * Anthropic's `{error: {message}}`, Ollama's `{error: "…"}`, `{message}`, or the inner object or
 * text itself as a library hands it over.
 */
export function serverMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body;
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message } = body as { error?: unknown; message?: unknown };
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const inner = (error as { message?: unknown }).message;
    if (typeof inner === 'string') return inner;
  }
  return typeof message === 'string' ? message : undefined;
}

/** The error type a body names: Anthropic's `{error: {type}}`, OpenAI's `{type}` inner object. */
function errorType(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, type } = body as { error?: unknown; type?: unknown };
  if (typeof error === 'object' && error !== null) {
    const inner = (error as { type?: unknown }).type;
    if (typeof inner === 'string') return inner;
  }
  return typeof type === 'string' ? type : undefined;
}

/** Describes a fetch rejection (undici hides the useful part in `cause`). */
export function describeNetworkError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
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

function rejectedHint(status: number, context: FailureContext): string {
  switch (status) {
    case 401:
    case 403:
      return `Check the API key: ${context.keyHint}.`;
    case 404:
      return `Check baseUrl (${context.shownUrl}): ${context.notFoundHint}; and that the server serves the model "${context.model}".`;
    case 413:
      return 'The conversation is too large for the server; lower maxIterations or the memory\'s maxTurns.';
    default:
      return `Check the model name ("${context.model}"), temperature and maxTokens; if the server does not support JSON mode, set "jsonMode": false.`;
  }
}

/** The HTTP status, headers and body a provider library's API error carries (duck-typed: both libraries use these names). */
interface LibraryApiError {
  readonly status?: unknown;
  readonly headers?: unknown;
  readonly error?: unknown;
}

/**
 * Turns what one attempt threw (a provider library's error, a network error, or a `RedflowError`
 * from {@link guardedFetch}) into a `RedflowError`: an {@link AttemptError} when another attempt
 * may succeed (network errors, 429, 5xx, a stream the server broke off), a plain one when it
 * cannot (other 4xx, a redirect, a body too large or not UTF-8, a stream that is not one).
 * Timeouts and aborts are told apart by the caller, which knows its signals.
 *
 * Messages quote the server's own words, never a library's message (which may quote a whole
 * body); the caller redacts them.
 */
export function attemptFailure(error: unknown, context: FailureContext): RedflowError {
  const own = findRedflowError(error);
  if (own !== undefined) return own;
  const { shownUrl } = context;
  const apiError = (typeof error === 'object' && error !== null ? error : {}) as LibraryApiError;
  const said = serverMessage(apiError.error);
  const detail = said === undefined ? '' : `: ${quote(said)}`;
  const status = apiError.status;
  if (typeof status === 'number') {
    if (status === 429) {
      return new AttemptError(
        {
          code: ErrorCode.MODEL_RATE_LIMITED,
          message: `${shownUrl} answered HTTP 429 (rate limited)${detail}`,
          hint: 'You are over the provider\'s rate limit or quota: wait, lower the request rate, or check your plan.',
          retryable: true,
        },
        retryAfterMs(apiError.headers, Date.now()),
      );
    }
    if (status >= 500) {
      return new AttemptError({
        code: ErrorCode.MODEL_SERVER_ERROR,
        message: `${shownUrl} answered HTTP ${status}${detail}`,
        hint: 'The model server failed or is overloaded; check its status or logs and try again later.',
        retryable: true,
      });
    }
    if (status >= 400) {
      return new RedflowError({
        code: ErrorCode.MODEL_REQUEST_REJECTED,
        message: `${shownUrl} rejected the request with HTTP ${status}${detail}`,
        hint: rejectedHint(status, context),
      });
    }
    return new RedflowError({
      code: ErrorCode.MODEL_PROTOCOL_ERROR,
      message: `${shownUrl} answered with unexpected HTTP status ${status}`,
      hint: 'Check baseUrl: it must be the API root of a server speaking the provider\'s protocol.',
    });
  }
  if (apiError.error !== undefined) {
    // An error event inside a stream that had started well: the server gave up mid-answer.
    const limited = errorType(apiError.error) === 'rate_limit_error';
    return new AttemptError({
      code: limited ? ErrorCode.MODEL_RATE_LIMITED : ErrorCode.MODEL_SERVER_ERROR,
      message: `${shownUrl} broke off its answer with an error${detail}`,
      hint: limited
        ? 'You are over the provider\'s rate limit or quota: wait, lower the request rate, or check your plan.'
        : 'The model server failed or is overloaded while answering; check its status and try again later.',
      retryable: true,
    });
  }
  if (error instanceof SyntaxError) {
    return new RedflowError({
      code: ErrorCode.MODEL_PROTOCOL_ERROR,
      message: `${shownUrl} sent a stream event that is not JSON`,
      hint: 'The server is not speaking the provider\'s streaming protocol as expected; check baseUrl and the server version.',
    });
  }
  return new AttemptError({
    code: ErrorCode.MODEL_UNAVAILABLE,
    message: `cannot reach ${shownUrl}: ${quote(describeNetworkError(error))}`,
    hint: `Check baseUrl (${shownUrl}) and that the model server is running and reachable (e.g. \`ollama serve\`).`,
    retryable: true,
  });
}
