/**
 * Turns the pieces of a streamed answer into pieces that are safe to show live: each one redacted,
 * and cut only right after whitespace. A secret (an API key, a token) is one word, so it lies whole
 * inside one piece and `redact` finds it there, however the server split the stream; the word still
 * being written waits for the next piece (or for {@link ChunkRedactor.flush} at the end).
 */
export interface ChunkRedactor {
  /** Takes the next piece of text; returns what can be shown now (possibly `''`). */
  push(piece: string): string;
  /** Returns the rest, once the answer is complete. */
  flush(): string;
}

/** The last whitespace character of `text`, or -1. */
function lastWhitespace(text: string): number {
  for (let i = text.length - 1; i >= 0; i -= 1) if (/\s/.test(text[i] as string)) return i;
  return -1;
}

/**
 * A {@link ChunkRedactor} using `redact` (the one the whole answer goes through).
 *
 * @example
 * ```ts
 * const chunks = createChunkRedactor(redactSecrets);
 * chunks.push('my key is sk-12'); // 'my key is '
 * chunks.push('34567890 ok');     // '[redacted] ' when sk-1234567890 is a known secret
 * chunks.flush();                 // 'ok'
 * ```
 */
export function createChunkRedactor(redact: (text: string) => string): ChunkRedactor {
  let held = '';
  return {
    push(piece) {
      // What is held has no whitespace: only the new piece can hold the next cut.
      const cut = lastWhitespace(piece);
      if (cut < 0) {
        held += piece;
        return '';
      }
      const ready = held + piece.slice(0, cut + 1);
      held = piece.slice(cut + 1);
      return redact(ready);
    },
    flush() {
      const rest = held;
      held = '';
      return rest === '' ? '' : redact(rest);
    },
  };
}
