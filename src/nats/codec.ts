/**
 * Turns transport payloads into bytes and back. `encode` throws on a value it cannot carry;
 * `decode` throws on bytes it cannot read. The NATS transport turns both into
 * `TRANSPORT_BAD_MESSAGE`, so a codec never has to think about replies.
 *
 * @example
 * ```ts
 * const transport = createNatsTransport(nc, { codec: jsonCodec });
 * ```
 */
export interface PayloadCodec {
  encode(value: unknown): Uint8Array;
  decode(bytes: Uint8Array): unknown;
}

const empty = new Uint8Array(0);
const encoder = new TextEncoder();
// `fatal`: bytes that are not UTF-8 are an error, never silently replaced by U+FFFD.
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The default codec: JSON in UTF-8. `undefined` is the empty payload (and the empty payload is
 * `undefined`), as a request without data is in NATS; anything else JSON cannot represent
 * (BigInt, cycles, a function) throws.
 *
 * @example
 * ```ts
 * jsonCodec.decode(jsonCodec.encode({ a: 1 })); // { a: 1 }
 * ```
 */
export const jsonCodec: PayloadCodec = {
  encode(value: unknown): Uint8Array {
    if (value === undefined) return empty;
    const text = JSON.stringify(value) as string | undefined;
    if (text === undefined) throw new TypeError(`a ${typeof value} cannot be sent as JSON`);
    return encoder.encode(text);
  },
  decode(bytes: Uint8Array): unknown {
    if (bytes.length === 0) return undefined;
    return JSON.parse(decoder.decode(bytes)) as unknown;
  },
};
