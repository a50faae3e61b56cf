/** A response body read up to a limit. */
export interface CappedBody {
  readonly bytes: Uint8Array;
  /** True when the body was longer than the limit (and `bytes` holds only the first `limit` bytes). */
  readonly truncated: boolean;
}

/**
 * Reads at most `limit` bytes of a fetch response's body, then cancels the rest: a server cannot
 * make an actor hold more than it asked for.
 *
 * @example
 * ```ts
 * const { bytes, truncated } = await readCappedBody(await fetch(url), 1024 * 1024);
 * ```
 */
export async function readCappedBody(response: Response, limit: number): Promise<CappedBody> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > limit) {
      await reader.cancel().catch(() => undefined);
      chunks.push(value.subarray(0, limit - size));
      size = limit;
      truncated = true;
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}
