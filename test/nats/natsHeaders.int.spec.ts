import { headers as natsHeaders, type MsgHdrs, type MsgHdrsImpl, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Header } from '../../src/actors/transport.js';
import { natsHeadersOf, toNatsHeaders } from '../../src/nats/natsWire.js';
import { connectTestServer, uniquePrefix } from './natsSupport.js';

// The headers of every log append, live copy and tool request are built by natsHeadersOf instead
// of nats.js's `headers()` and `set`: what goes on the wire, and what is refused, must not change.

let nc: NatsConnection;

beforeAll(async () => {
  nc = await connectTestServer('nats-headers');
});

afterAll(async () => {
  await nc.close();
});

/** The error `build` throws, or undefined. */
function refusal(build: () => unknown): string | undefined {
  try {
    build();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The bytes a publish sends for `hdrs` (nats.js encodes every header object it is given this way). */
function wire(hdrs: MsgHdrs): Uint8Array {
  return (hdrs as MsgHdrsImpl).encode();
}

/** nats.js's own headers holding `given`, one `set` each. */
function setOneByOne(given: Record<string, string>) {
  const hdrs = natsHeaders();
  for (const [name, value] of Object.entries(given)) hdrs.set(name, value);
  return hdrs;
}

describe('natsHeadersOf', () => {
  it('sends the bytes nats.js sends for the same headers, and a subscriber reads them back', async () => {
    const given = { [Header.TraceId]: 'run-7', [Header.Seq]: '12', 'Nats-Msg-Id': ' run-7:12 ' };
    expect(wire(natsHeadersOf(given))).toEqual(wire(setOneByOne(given)));
    const subject = `${uniquePrefix()}.headers`;
    const received = new Promise<Record<string, string>>((resolve) => {
      nc.subscribe(subject, {
        max: 1,
        callback: (_error, msg) => resolve(Object.fromEntries((msg.headers?.keys() ?? []).map((name) => [name, msg.headers?.get(name) ?? '']))),
      });
    });
    await nc.flush();
    nc.publish(subject, 'x', { headers: natsHeadersOf(given) });
    // Values are trimmed, as nats.js's `set` trims them.
    expect(await received).toEqual({ [Header.TraceId]: 'run-7', [Header.Seq]: '12', 'Nats-Msg-Id': 'run-7:12' });
  });

  it('refuses a name or a value NATS cannot carry with the error nats.js gives', () => {
    const refused: Record<string, string>[] = [{ 'a name': 'x' }, { 'Name:': 'x' }, { Name: 'two\nlines' }, { Name: 'a\rb' }];
    for (const given of refused) {
      const expected = refusal(() => setOneByOne(given));
      expect(expected).toBeDefined();
      // Twice: a name is checked once and remembered only when it is valid.
      expect(refusal(() => natsHeadersOf(given))).toBe(expected);
      expect(refusal(() => natsHeadersOf(given))).toBe(expected);
    }
  });

  it('leaves a request without application headers without NATS headers', () => {
    expect(toNatsHeaders(undefined)).toBeUndefined();
    expect(toNatsHeaders({})).toBeUndefined();
    expect(toNatsHeaders({ [Header.IdempotencyKey]: 'k-1' })?.get(Header.IdempotencyKey)).toBe('k-1');
  });
});
