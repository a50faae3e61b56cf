import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { createInProcessTransport } from '../../src/actors/inProcessTransport.js';
import { subjectMatches } from '../../src/actors/subjectMatch.js';
import type { TransportMessage } from '../../src/actors/transport.js';

describe('the in-process transport', () => {
  it('should answer a request from the service on its subject', async () => {
    const transport = createInProcessTransport();
    transport.serve('t.add', ({ a, b }: { a: number; b: number }) => a + b);
    await expect(transport.request('t.add', { a: 2, b: 3 }, { timeoutMs: 1000 })).resolves.toEqual({ ok: true, data: 5 });
    await transport.close();
  });

  it('should share requests round-robin inside a queue group', async () => {
    const transport = createInProcessTransport();
    const seen: string[] = [];
    transport.serve('t.work', async () => seen.push('a'), { queue: 'workers' });
    transport.serve('t.work', async () => seen.push('b'), { queue: 'workers' });
    for (let i = 0; i < 4; i++) await transport.request('t.work', null, { timeoutMs: 1000 });
    expect(seen).toEqual(['a', 'b', 'a', 'b']);
    await transport.close();
  });

  it('should say at once when nothing answers on a subject', async () => {
    const transport = createInProcessTransport();
    const reply = await transport.request('t.nobody', null, { timeoutMs: 1000 });
    expect(reply).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_NO_RESPONDER } });
    await transport.close();
  });

  it('should carry a handler error back as data', async () => {
    const transport = createInProcessTransport();
    transport.serve('t.fail', async () => {
      throw new Error('nope');
    });
    expect(await transport.request('t.fail', null, { timeoutMs: 1000 })).toMatchObject({ ok: false, error: { message: 'nope' } });
    await transport.close();
  });

  it('should time a request out when its handler does not answer in time', async () => {
    const transport = createInProcessTransport();
    transport.serve('t.slow', () => new Promise(() => undefined));
    const started = Date.now();
    const reply = await transport.request('t.slow', null, { timeoutMs: 60 });
    expect(reply).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_TIMEOUT, retryable: true } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(Date.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
    await transport.close();
  });

  it('should hand the handler the requester signal, and refuse an already aborted request', async () => {
    const transport = createInProcessTransport();
    let seen: AbortSignal | undefined;
    transport.serve('t.sig', (_data, context) => ((seen = context.signal), true));
    const controller = new AbortController();
    await transport.request('t.sig', null, { timeoutMs: 1000, signal: controller.signal });
    expect(seen).toBe(controller.signal);
    controller.abort();
    expect(await transport.request('t.sig', null, { timeoutMs: 1000, signal: controller.signal })).toMatchObject({
      ok: false,
      error: { code: ErrorCode.RUN_ABORTED },
    });
    await transport.close();
  });

  it('should end waiting requests when it closes', async () => {
    const transport = createInProcessTransport();
    transport.serve('t.hang', () => new Promise(() => undefined));
    const waiting = transport.request('t.hang', null, { timeoutMs: 60_000 });
    await transport.close();
    expect(await waiting).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_CLOSED } });
    expect(await transport.request('t.hang', null, { timeoutMs: 10 })).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_CLOSED } });
  });

  it('should deliver published messages to matching subscriptions, never inside the publisher', async () => {
    const transport = createInProcessTransport();
    const got: TransportMessage[] = [];
    transport.subscribe('r.trace.>', (message) => got.push(message));
    transport.subscribe('r.trace.*.run', (message) => got.push(message));
    transport.publish('r.trace.t1.run.started', { n: 1 });
    transport.publish('r.trace.t1.run', { n: 2 });
    transport.publish('r.other', { n: 3 });
    expect(got).toHaveLength(0);
    await Promise.resolve();
    expect(got.map((m) => (m.data as { n: number }).n).sort()).toEqual([1, 2, 2]);
    await transport.close();
  });
});

describe('subject matching', () => {
  it.each([
    ['a.b', 'a.b', true],
    ['a.*', 'a.b', true],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['*.b', 'a.b', true],
    ['a.b', 'a.c', false],
  ])('should match %s against %s: %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });
});
