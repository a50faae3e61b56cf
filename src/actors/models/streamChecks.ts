import { ErrorCode, RedflowError } from '../../errors.js';
import { responseTooLarge } from './guardedFetch.js';
import { AttemptError, quote } from './modelFailure.js';

/** A `MODEL_PROTOCOL_ERROR`: the server does not speak the provider's protocol as expected. */
export function protocolError(message: string, hint: string): RedflowError {
  return new RedflowError({ code: ErrorCode.MODEL_PROTOCOL_ERROR, message, hint });
}

/**
 * Refuses a response that is not an event stream (`text/event-stream`): a server that ignored
 * `"stream": true` and answered with one JSON body, or a web page where an API should be. A
 * response without a Content-Type is given the benefit of the doubt. Cancels the body (through
 * `abort`) before throwing.
 */
export function requireEventStream(response: Response, shownUrl: string, abort: () => void): void {
  const type = response.headers.get('content-type');
  if (type === null || /^\s*text\/event-stream\s*(;|$)/i.test(type)) return;
  abort();
  const json = /json/i.test(type);
  throw protocolError(
    json ? `${shownUrl} answered with one JSON body instead of a stream of events` : `${shownUrl} answered with ${quote(type)} instead of a stream of events`,
    json
      ? 'Redflow streams every answer ("stream": true); use a server that supports streaming, or a newer version of it.'
      : 'Check baseUrl: it must be the API root of a server speaking the provider\'s protocol, not a web page or a proxy\'s error page.',
  );
}

/** The failure of a stream that ended before the server said the answer was complete (retried). */
export function streamEndedEarly(shownUrl: string): AttemptError {
  return new AttemptError({
    code: ErrorCode.MODEL_UNAVAILABLE,
    message: `${shownUrl} ended its stream before the answer was complete`,
    hint: 'The connection was cut or the server stopped mid-answer; check the server and any proxy in front of it.',
    retryable: true,
  });
}

/** True for a count of tokens: a finite number ≥ 0. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** `value` as a record when it is a JSON object, else undefined. */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The text of a streamed answer, joined piece by piece, that refuses to grow past
 * `maxResponseBytes` (UTF-8) with `MODEL_RESPONSE_TOO_LARGE`: what the model actor holds of an
 * answer is bounded, however the server splits it.
 */
export class AnswerText {
  #text = '';
  #bytes = 0;

  constructor(
    private readonly shownUrl: string,
    private readonly maxBytes: number,
    /** Sees each piece once it is taken, for a live view of the answer. */
    private readonly onPiece?: (piece: string) => void,
  ) {}

  /** Adds a piece; throws once the text is longer than the limit. */
  append(piece: string): void {
    this.#bytes += Buffer.byteLength(piece, 'utf8');
    if (this.#bytes > this.maxBytes) throw responseTooLarge(this.shownUrl, this.maxBytes, 'an answer');
    this.#text += piece;
    if (piece !== '') this.onPiece?.(piece);
  }

  /** Counts a piece of the answer that is not its text (a tool call's arguments) against the limit. */
  count(piece: string): void {
    this.#bytes += Buffer.byteLength(piece, 'utf8');
    if (this.#bytes > this.maxBytes) throw responseTooLarge(this.shownUrl, this.maxBytes, 'an answer');
  }

  get text(): string {
    return this.#text;
  }
}
