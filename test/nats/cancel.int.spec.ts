import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelActor } from '../../src/actors/model.js';
import { createNatsTransport } from '../../src/nats/natsTransport.js';
import { serveModel } from '../../src/runtime/serveActors.js';
import { Subject } from '../../src/actors/subjects.js';
import { Header, type Transport } from '../../src/actors/transport.js';
import { ErrorCode } from '../../src/errors.js';
import { connectTestServer, eventually, uniquePrefix } from './natsSupport.js';

// Cancels over NATS: a requester that gives up aborts the handler's signal in the worker that runs
// the call (and in every worker that runs another attempt of the same idempotency key).

const connections: NatsConnection[] = [];
const transports: Transport[] = [];

async function transport(name: string): Promise<{ nc: NatsConnection; transport: Transport }> {
  const nc = await connectTestServer(name);
  const made = createNatsTransport(nc, { log: () => undefined });
  connections.push(nc);
  transports.push(made);
  return { nc, transport: made };
}

let core: Transport;
let workerA: { nc: NatsConnection; transport: Transport };
let workerB: { nc: NatsConnection; transport: Transport };

beforeAll(async () => {
  core = (await transport('cancel-core')).transport;
  workerA = await transport('cancel-worker-a');
  workerB = await transport('cancel-worker-b');
});

afterAll(async () => {
  for (const made of transports) await made.close();
  for (const nc of connections) await nc.drain();
});

/** A handler that waits until its signal aborts; it records the keys it ran and those it was stopped for. */
function waitsForCancel() {
  const ran: string[] = [];
  const stopped: string[] = [];
  const reasons: unknown[] = [];
  const handler = (data: { key?: string }, { signal }: { signal: AbortSignal }) =>
    new Promise((_resolve, reject) => {
      ran.push(data.key ?? '');
      signal.addEventListener('abort', () => {
        stopped.push(data.key ?? '');
        reasons.push(signal.reason);
        reject(new Error('cancelled'));
      });
    });
  return { handler, ran, stopped, reasons, calls: () => ran.length };
}

describe('a requester that gives up, over NATS', () => {
  it("should abort the model's signal in the model worker (a long LLM request is cancelled)", async () => {
    const subject = Subject.model(uniquePrefix(), 'llm');
    const signals: AbortSignal[] = [];
    const model: ModelActor = {
      complete: (_request, signal) => {
        signals.push(signal);
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('cancelled'))));
      },
    } as ModelActor;
    const served = serveModel(workerA.transport, subject, model);
    await workerA.nc.flush();
    const controller = new AbortController();
    const reply = core.request(subject, { traceId: 't-1', iteration: 1, messages: [] }, { timeoutMs: 10_000, signal: controller.signal });
    await eventually(() => signals.length === 1, 5000);
    controller.abort();
    await expect(reply).resolves.toMatchObject({ ok: false, error: { code: ErrorCode.RUN_ABORTED } });
    await eventually(() => signals[0]?.aborted === true, 5000);
    expect(signals[0]?.reason).toMatchObject({ code: ErrorCode.RUN_ABORTED });
    served.unsubscribe();
  });

  it('should stop every attempt of an idempotency key, on each worker, and nothing else', async () => {
    const subject = Subject.tool(uniquePrefix(), 'slow');
    const a = waitsForCancel();
    const b = waitsForCancel();
    const served = [workerA.transport.serve(subject, a.handler, { cancellable: true }), workerB.transport.serve(subject, b.handler, { cancellable: true })];
    await Promise.all([workerA.nc.flush(), workerB.nc.flush()]);
    const ask = (key: string, signal?: AbortSignal) =>
      core.request(subject, { key }, { timeoutMs: 10_000, headers: { [Header.IdempotencyKey]: key }, ...(signal && { signal }) });
    // Attempts of one key (the first given up on after a lost reply, say), and another key's call,
    // until both workers run something.
    const other = new AbortController();
    void ask('run-2:1', other.signal);
    const attempts: Promise<unknown>[] = [];
    const last = new AbortController();
    const attemptsOn = (worker: typeof a) => worker.ran.filter((key) => key === 'run-1:1').length;
    // Earlier attempts, given up on without a word (their replies were lost, say), on both workers.
    for (let n = 0; n < 30 && (attemptsOn(a) === 0 || attemptsOn(b) === 0); n++) {
      attempts.push(ask('run-1:1'));
      await eventually(() => a.calls() + b.calls() === attempts.length + 1, 5000);
    }
    expect(attemptsOn(a)).toBeGreaterThan(0);
    expect(attemptsOn(b)).toBeGreaterThan(0);
    // Only the last attempt's requester aborts: its cancel names the key, so every attempt stops.
    attempts.push(ask('run-1:1', last.signal));
    await eventually(() => a.calls() + b.calls() === attempts.length + 1, 5000);
    last.abort();
    await eventually(() => a.stopped.length + b.stopped.length === attempts.length, 5000);
    // The other key's call runs on.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([...a.stopped, ...b.stopped]).toEqual(attempts.map(() => 'run-1:1'));
    expect([...a.reasons, ...b.reasons].every((reason) => (reason as { code?: string }).code === ErrorCode.RUN_ABORTED)).toBe(true);
    other.abort();
    await eventually(() => [...a.stopped, ...b.stopped].includes('run-2:1'), 5000);
    for (const subscription of served) subscription.unsubscribe();
  });

  it('should leave a service that is not cancellable alone', async () => {
    const subject = Subject.tool(uniquePrefix(), 'plain');
    const plain = waitsForCancel();
    const served = workerA.transport.serve(subject, plain.handler);
    await workerA.nc.flush();
    const controller = new AbortController();
    const reply = core.request(subject, {}, { timeoutMs: 10_000, signal: controller.signal });
    await eventually(() => plain.calls() === 1, 5000);
    controller.abort();
    await expect(reply).resolves.toMatchObject({ ok: false, error: { code: ErrorCode.RUN_ABORTED } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(plain.stopped).toEqual([]);
    served.unsubscribe();
  });
});
