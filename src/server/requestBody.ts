import type { IncomingMessage } from 'node:http';
import { ApiError, ErrorCode, errorInfo } from '../errors.js';
import { locateJsonSyntaxError } from '../files/jsonSyntaxError.js';

/** The largest request body the API reads unless a route says otherwise: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Options of {@link readJsonBody}. */
export interface JsonBodyOptions {
  /** Bodies over this many bytes are refused with 413, before and while reading. */
  readonly maxBytes: number;
  /** True when the route takes no body as well (`undefined` is returned then). */
  readonly optional?: boolean;
}

const BYTE_ORDER_MARK = '\uFEFF';

/**
 * Reads a request's body as JSON: `Content-Type: application/json` (415 otherwise), at most
 * `maxBytes` (413), UTF-8, well-formed JSON (400 with the line and column of the mistake).
 *
 * A body that is too large is not read into memory: the rest of it is discarded as it arrives, so
 * the client can finish sending and read the 413 instead of seeing its connection reset.
 *
 * @example
 * ```ts
 * const body = await readJsonBody(req, { maxBytes: DEFAULT_MAX_BODY_BYTES });
 * ```
 */
export async function readJsonBody(req: IncomingMessage, options: JsonBodyOptions): Promise<unknown> {
  const declared = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const hasBody = chunked || (declared !== undefined && declared !== '0');
  if (!hasBody) {
    if (options.optional) return undefined;
    throw new ApiError(errorInfo(ErrorCode.HTTP_BODY_NOT_JSON, 'the request has no body; this route takes a JSON body', { hint: 'send a JSON body with Content-Type: application/json' }));
  }
  if (!isJsonMediaType(req.headers['content-type'])) {
    req.resume();
    throw new ApiError(
      errorInfo(ErrorCode.HTTP_UNSUPPORTED_MEDIA_TYPE, `the body must be JSON, not ${req.headers['content-type'] ?? 'of no declared type'}`, {
        hint: 'send the header Content-Type: application/json',
      }),
    );
  }
  if (declared !== undefined && Number(declared) > options.maxBytes) {
    req.resume();
    throw tooLarge(options.maxBytes);
  }
  const bytes = await readLimited(req, options.maxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError(errorInfo(ErrorCode.HTTP_BODY_NOT_JSON, 'the body is not UTF-8 text', { hint: 'send the JSON encoded as UTF-8' }));
  }
  if (text.startsWith(BYTE_ORDER_MARK)) text = text.slice(BYTE_ORDER_MARK.length);
  try {
    return JSON.parse(text) as unknown;
  } catch (thrown) {
    const location = locateJsonSyntaxError(text);
    const message =
      location === undefined
        ? `the body is not valid JSON: ${thrown instanceof Error ? thrown.message : 'unknown error'}`
        : `the body is not valid JSON at line ${location.line}, column ${location.column}: ${location.reason}`;
    throw new ApiError(errorInfo(ErrorCode.HTTP_BODY_NOT_JSON, message, { hint: 'fix the JSON syntax' }));
  }
}

/** True for `application/json`, with or without parameters such as `charset=utf-8`. */
function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [type] = contentType.split(';');
  return type?.trim().toLowerCase() === 'application/json';
}

function readLimited(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let over = false;
    const onData = (chunk: Buffer) => {
      if (over) return;
      total += chunk.length;
      if (total > maxBytes) {
        over = true;
        chunks.length = 0;
        // Keep draining (the data is dropped) so the client can read the 413.
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (!over) resolve(Buffer.concat(chunks, total));
    });
    req.once('error', (error) => {
      if (!over) reject(error);
    });
    req.once('aborted', () => {
      if (!over) reject(new Error('the client closed the connection while sending the body'));
    });
  });
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(
    errorInfo(ErrorCode.HTTP_BODY_TOO_LARGE, `the body is larger than the ${formatBytes(maxBytes)} this route accepts`, {
      hint: 'send a smaller body (a flow holds nodes and edges only: keep large data in separate files)',
    }),
  );
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
