import { ErrorCode, RedflowError } from '../../errors.js';
import { readCappedBody } from '../httpBody.js';

/** Settings of {@link guardedFetch}. */
export interface FetchGuards {
  /** Longest line of a successful response, in bytes: past it the read fails with `MODEL_RESPONSE_TOO_LARGE`. */
  readonly maxResponseBytes: number;
  /** Origin and path of the server, as messages may show it (never the key, never a query). */
  readonly shownUrl: string;
  /** The fetch underneath. */
  readonly fetch: typeof fetch;
}

/** Error bodies are only read for their message; this much is plenty. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The `fetch` a provider library is given, so that the guards hold whatever the library does:
 *
 * - a redirect is refused (`MODEL_REQUEST_REJECTED`), never followed: it could carry the key to
 *   another host;
 * - a successful body is read through a counter of its lines: a line (an event of a stream, or a
 *   whole body without line breaks) longer than `maxResponseBytes` fails the read with
 *   `MODEL_RESPONSE_TOO_LARGE` and drops the connection, so the library never buffers more. The
 *   stream as a whole is bounded by the attempt's deadline, and the answer's text by the
 *   providers' readers (`AnswerText`);
 * - a successful body must be UTF-8: other bytes fail the read with `MODEL_PROTOCOL_ERROR` rather
 *   than turning into replacement characters in the answer;
 * - an error body is cut at 64 KiB (it is read only for its message).
 *
 * Failures are thrown as `RedflowError`s; a library wraps them in its own connection error, with
 * the original as `cause`, where {@link findRedflowError} finds them.
 *
 * @example
 * ```ts
 * const client = new OpenAI({ baseURL, apiKey, fetch: guardedFetch({ maxResponseBytes: 4 << 20, shownUrl: baseURL, fetch }) });
 * ```
 */
export function guardedFetch(guards: FetchGuards): typeof fetch {
  const { maxResponseBytes, shownUrl } = guards;
  const tooLarge = (): RedflowError => responseTooLarge(shownUrl, maxResponseBytes, 'a line');

  return async (input, init) => {
    const response = await guards.fetch(input, { ...init, redirect: 'manual' });
    const { status } = response;
    if (status >= 300 && status < 400) {
      await response.body?.cancel().catch(() => {});
      throw redirectRefused(response, String(input instanceof Request ? input.url : input), shownUrl);
    }
    const head = { status, statusText: response.statusText, headers: response.headers };
    if (status < 200 || status >= 300) {
      const { bytes } = await readCappedBody(response, Math.min(MAX_ERROR_BODY_BYTES, maxResponseBytes));
      return new Response(bytes, head);
    }
    // 204 and 205 may carry no body at all, not even an empty stream.
    if (response.body === null || status === 204 || status === 205) return new Response(null, head);
    return new Response(response.body.pipeThrough(checkedBytes(maxResponseBytes, tooLarge, shownUrl)), head);
  };
}

/**
 * The `MODEL_RESPONSE_TOO_LARGE` error: `what` (the answer, a line of the stream) is longer than
 * `maxResponseBytes`.
 */
export function responseTooLarge(shownUrl: string, maxResponseBytes: number, what: string): RedflowError {
  return new RedflowError({
    code: ErrorCode.MODEL_RESPONSE_TOO_LARGE,
    message: `${shownUrl} sent ${what} larger than ${maxResponseBytes} bytes`,
    hint: `Lower "maxTokens", or raise "maxResponseBytes" in the model node's config (now ${maxResponseBytes}) if such large answers are expected.`,
  });
}

/** Passes bytes on while measuring their lines and checking they are UTF-8; fails the stream otherwise. */
function checkedBytes(limit: number, tooLarge: () => RedflowError, shownUrl: string): TransformStream<Uint8Array, Uint8Array> {
  /** Bytes since the last line feed. */
  let line = 0;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const notUtf8 = (): RedflowError =>
    new RedflowError({
      code: ErrorCode.MODEL_PROTOCOL_ERROR,
      message: `${shownUrl} sent a response that is not valid UTF-8`,
      hint: 'The server or a proxy in front of it garbled the answer; check its logs and its charset settings.',
    });
  return new TransformStream({
    transform(chunk, controller) {
      let start = 0;
      for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, start)) {
        if (line + at - start > limit) throw tooLarge();
        line = 0;
        start = at + 1;
      }
      line += chunk.byteLength - start;
      if (line > limit) throw tooLarge();
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        throw notUtf8();
      }
      controller.enqueue(chunk);
    },
    flush() {
      try {
        decoder.decode();
      } catch {
        throw notUtf8();
      }
    },
  });
}

function redirectRefused(response: Response, requested: string, shownUrl: string): RedflowError {
  const location = response.headers.get('location');
  let shownLocation = '';
  if (location !== null) {
    try {
      const target = new URL(location, requested);
      shownLocation = ` to ${target.origin}${target.pathname}`;
    } catch {
      // Unparsable Location: leave it out.
    }
  }
  return new RedflowError({
    code: ErrorCode.MODEL_REQUEST_REJECTED,
    message: `${shownUrl} answered HTTP ${response.status} (redirect${shownLocation})`,
    hint: 'Redflow does not follow redirects (they could carry the API key elsewhere); set baseUrl to the final URL.',
  });
}

/**
 * The first `RedflowError` in `error`'s `cause` chain (itself included): what {@link guardedFetch}
 * threw, under whatever the provider library wrapped it in.
 */
export function findRedflowError(error: unknown): RedflowError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    if (current instanceof RedflowError) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}
