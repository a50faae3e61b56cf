import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { createInProcessTransport } from '../../src/actors/inProcessTransport.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { createNatsTransport, NatsHeader, type NatsTransportOptions } from '../../src/nats/natsTransport.js';
import { Subject } from '../../src/actors/subjects.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { Header, type Transport, type TransportMessage } from '../../src/actors/transport.js';
import { fold } from '../../src/events/evolve.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { connectTestServer, eventually, uniquePrefix } from './natsSupport.js';

let workerNc: NatsConnection;
let otherWorkerNc: NatsConnection;
let coreNc: NatsConnection;
let prefix: string;
/** Transports made by the current test, closed after it. */
const made: Transport[] = [];
/** Log lines of the current test's transports. */
let logged: string[];

/** A NATS transport on `nc` whose log lines go to `logged`, closed after the test. */
function natsTransport(nc: NatsConnection, options: NatsTransportOptions = {}): Transport {
  const transport = createNatsTransport(nc, { log: (line) => logged.push(line), ...options });
  made.push(transport);
  return transport;
}

/** Makes sure the server has seen every subscription made so far on these connections. */
async function synced(...connections: NatsConnection[]): Promise<void> {
  await Promise.all(connections.map((nc) => nc.flush()));
}

beforeAll(async () => {
  workerNc = await connectTestServer('redflow-test-worker');
  otherWorkerNc = await connectTestServer('redflow-test-worker-2');
  coreNc = await connectTestServer('redflow-test-core');
});

afterAll(async () => {
  await Promise.all([workerNc, otherWorkerNc, coreNc].map((nc) => nc?.drain()));
});

beforeEach(() => {
  prefix = uniquePrefix();
  logged = [];
});

afterEach(async () => {
  await Promise.all(made.splice(0).map((transport) => transport.close()));
});

describe('the NATS transport', () => {
  it('should answer a request from another connection, carrying the headers', async () => {
    const worker = natsTransport(workerNc);
    const core = natsTransport(coreNc);
    let seen: Record<string, string> = {};
    worker.serve(`${prefix}.add`, ({ a, b }: { a: number; b: number }, context) => {
      seen = { ...context.headers, subject: context.subject };
      return { sum: a + b };
    });
    await synced(workerNc);
    const reply = await core.request(`${prefix}.add`, { a: 2, b: 3 }, { timeoutMs: 2000, headers: { [Header.TraceId]: 't-1' } });
    expect(reply).toEqual({ ok: true, data: { sum: 5 } });
    expect(seen).toEqual({ [Header.TraceId]: 't-1', subject: `${prefix}.add` });
  });

  it('should share requests between the members of a queue group on two connections', async () => {
    const served = { a: 0, b: 0 };
    natsTransport(workerNc).serve(`${prefix}.work`, () => ++served.a);
    natsTransport(otherWorkerNc).serve(`${prefix}.work`, () => ++served.b);
    await synced(workerNc, otherWorkerNc);
    const core = natsTransport(coreNc);
    const replies = await Promise.all(Array.from({ length: 40 }, () => core.request(`${prefix}.work`, null, { timeoutMs: 2000 })));
    expect(replies.every((reply) => reply.ok)).toBe(true);
    // Each request is answered once, and both members got work.
    expect(served.a + served.b).toBe(40);
    expect(served.a).toBeGreaterThan(0);
    expect(served.b).toBeGreaterThan(0);
  });

  it('should say at once when nothing answers on a subject', async () => {
    const core = natsTransport(coreNc);
    const started = Date.now();
    const reply = await core.request(`${prefix}.nobody`, null, { timeoutMs: 5000 });
    expect(reply).toEqual({
      ok: false,
      error: {
        code: ErrorCode.TRANSPORT_NO_RESPONDER,
        message: `nothing answers on ${prefix}.nobody`,
        hint: 'start the actor that serves this subject',
        retryable: true,
      },
    });
    expect(Date.now() - started).toBeLessThan(3_000); // at once, not after the request's 5 s timeout; generous for a loaded machine
  });

  it('should time a request out when its handler does not answer in time', async () => {
    natsTransport(workerNc).serve(`${prefix}.slow`, (_data, { signal }) => new Promise((resolve) => signal.addEventListener('abort', resolve)));
    await synced(workerNc);
    const started = Date.now();
    const reply = await natsTransport(coreNc).request(`${prefix}.slow`, null, { timeoutMs: 100 });
    expect(reply).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_TIMEOUT, retryable: true } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(Date.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
  });

  it('should carry a handler error back as data, with the error header on the wire', async () => {
    const worker = natsTransport(workerNc);
    worker.serve(`${prefix}.redflow`, async () => {
      throw new RedflowError({ code: ErrorCode.TOOL_FAILED, message: 'the order service is down', hint: 'try later', retryable: true });
    });
    worker.serve(`${prefix}.plain`, () => {
      throw new Error('nope');
    });
    await synced(workerNc);
    const core = natsTransport(coreNc);
    expect(await core.request(`${prefix}.redflow`, null, { timeoutMs: 2000 })).toEqual({
      ok: false,
      error: { code: ErrorCode.TOOL_FAILED, message: 'the order service is down', hint: 'try later', retryable: true },
    });
    // As in-process: an error that is not a RedflowError gets TRANSPORT_BAD_MESSAGE.
    expect(await core.request(`${prefix}.plain`, null, { timeoutMs: 2000 })).toEqual({
      ok: false,
      error: { code: ErrorCode.TRANSPORT_BAD_MESSAGE, message: 'nope' },
    });
    const raw = await coreNc.request(`${prefix}.plain`, '', { timeout: 2000 });
    expect(raw.headers?.get(NatsHeader.Error)).toBe(ErrorCode.TRANSPORT_BAD_MESSAGE);
    expect(raw.json()).toEqual({ ok: false, error: { code: ErrorCode.TRANSPORT_BAD_MESSAGE, message: 'nope' } });
  });

  it('should stop waiting when the requester aborts, and not send an already aborted request', async () => {
    let calls = 0;
    natsTransport(workerNc).serve(`${prefix}.hang`, (_data, { signal }) => {
      calls++;
      return new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    await synced(workerNc);
    const core = natsTransport(coreNc);
    const controller = new AbortController();
    const started = Date.now();
    const waiting = core.request(`${prefix}.hang`, null, { timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await waiting).toEqual({ ok: false, error: { code: ErrorCode.RUN_ABORTED, message: 'the request was aborted' } });
    expect(Date.now() - started).toBeLessThan(5_000); // far from the 10 s+ it would take otherwise; generous for a loaded machine
    expect(await core.request(`${prefix}.hang`, null, { timeoutMs: 1000, signal: controller.signal })).toMatchObject({
      ok: false,
      error: { code: ErrorCode.RUN_ABORTED },
    });
    expect(calls).toBe(1);
  });

  it('should answer garbage, invalid JSON and oversized requests with an error, and keep serving', async () => {
    let calls = 0;
    natsTransport(workerNc, { maxPayloadBytes: 1024 }).serve(`${prefix}.strict`, (data: { n: number }) => {
      calls++;
      return data.n * 2;
    });
    await synced(workerNc);
    const bad = [new Uint8Array([0xff, 0xfe, 0x00, 0x80]), '{"n":', JSON.stringify({ n: 1, pad: 'x'.repeat(2048) })];
    for (const payload of bad) {
      const raw = await coreNc.request(`${prefix}.strict`, payload, { timeout: 2000 });
      expect(raw.headers?.get(NatsHeader.Error)).toBe(ErrorCode.TRANSPORT_BAD_MESSAGE);
      expect(raw.json()).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_BAD_MESSAGE } });
    }
    expect(logged).toHaveLength(3);
    expect(logged[0]).toContain('not valid JSON');
    expect(logged[2]).toContain('the limit is 1024');
    // The payload itself never reaches the log.
    expect(logged.join('\n')).not.toContain('xxxx');
    expect(calls).toBe(0);
    expect(await natsTransport(coreNc).request(`${prefix}.strict`, { n: 21 }, { timeoutMs: 2000 })).toEqual({ ok: true, data: 42 });
  });

  it('should refuse a reply or a request it cannot carry, as data', async () => {
    const worker = natsTransport(workerNc);
    worker.serve(`${prefix}.bigint`, () => 10n);
    await synced(workerNc);
    const core = natsTransport(coreNc, { maxPayloadBytes: 300 });
    expect(await core.request(`${prefix}.bigint`, null, { timeoutMs: 2000 })).toMatchObject({
      ok: false,
      error: { code: ErrorCode.TRANSPORT_BAD_MESSAGE, message: expect.stringContaining('cannot be sent as JSON') },
    });
    expect(await core.request(`${prefix}.bigint`, { pad: 'x'.repeat(400) }, { timeoutMs: 2000 })).toMatchObject({
      ok: false,
      error: { code: ErrorCode.TRANSPORT_BAD_MESSAGE, message: expect.stringContaining('the limit is 300') },
    });
  });

  it('should drop a request without a reply subject, with a log line', async () => {
    let calls = 0;
    natsTransport(workerNc).serve(`${prefix}.job`, () => ++calls);
    await synced(workerNc);
    coreNc.publish(`${prefix}.job`, JSON.stringify({ any: 'thing' }));
    // Messages from one connection arrive in order: once this is answered, the publish was seen.
    expect(await natsTransport(coreNc).request(`${prefix}.job`, null, { timeoutMs: 2000 })).toEqual({ ok: true, data: 1 });
    expect(calls).toBe(1);
    expect(logged).toEqual([`redflow nats: ${prefix}.job: dropped a request without a reply subject`]);
  });

  it('should deliver published messages to wildcard subscriptions, and drop undecodable ones', async () => {
    const watcher = natsTransport(coreNc);
    const all: TransportMessage[] = [];
    const runs: TransportMessage[] = [];
    watcher.subscribe(`${prefix}.trace.>`, (message) => all.push(message));
    watcher.subscribe(`${prefix}.trace.*.run`, (message) => runs.push(message));
    watcher.subscribe(`${prefix}.trace.t1.run`, () => {
      throw new Error('a broken subscriber');
    });
    await synced(coreNc);
    const publisher = natsTransport(workerNc);
    publisher.publish(`${prefix}.trace.t1.run`, { seq: 1 }, { [Header.TraceId]: 't1' });
    workerNc.publish(`${prefix}.trace.t1.bad`, new Uint8Array([0xc3, 0x28]));
    publisher.publish(`${prefix}.trace.t1.run.started`, { seq: 2 });
    publisher.publish(`${prefix}.other`, { seq: 3 });
    publisher.publish(`${prefix}.trace.t2.run`, 10n);
    await eventually(() => all.length === 2 && runs.length === 1 && logged.length === 3);
    expect(all).toEqual([
      { subject: `${prefix}.trace.t1.run`, data: { seq: 1 }, headers: { [Header.TraceId]: 't1' } },
      { subject: `${prefix}.trace.t1.run.started`, data: { seq: 2 }, headers: {} },
    ]);
    expect(runs).toEqual([all[0]]);
    expect(logged.sort()).toEqual([
      `redflow nats: ${prefix}.trace.t1.bad: dropped a published message: not valid JSON in UTF-8 (2 bytes)`,
      `redflow nats: ${prefix}.trace.t1.run: a subscriber failed: a broken subscriber`,
      expect.stringContaining(`redflow nats: ${prefix}.trace.t2.run: dropped a published message: the message cannot be sent as JSON`),
    ]);
  });

  it('should end pending requests when it closes, abort its handlers, and leave the connection open', async () => {
    const signals: AbortSignal[] = [];
    const worker = natsTransport(workerNc);
    worker.serve(`${prefix}.hang`, (_data, { signal }) => {
      signals.push(signal);
      return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    });
    await synced(workerNc);
    const core = natsTransport(coreNc);
    const first = core.request(`${prefix}.hang`, null, { timeoutMs: 60_000 });
    await eventually(() => signals.length === 1);
    await core.close();
    expect(await first).toEqual({ ok: false, error: { code: ErrorCode.TRANSPORT_CLOSED, message: 'the transport closed before the reply' } });
    expect(await core.request(`${prefix}.hang`, null, { timeoutMs: 10 })).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_CLOSED } });

    // The worker's handler is aborted when the worker's transport closes; its requester is told.
    const other = natsTransport(otherWorkerNc);
    const second = other.request(`${prefix}.hang`, null, { timeoutMs: 60_000 });
    await eventually(() => signals.length === 2);
    await worker.close();
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    expect(await second).toMatchObject({ ok: false, error: { code: ErrorCode.TRANSPORT_CLOSED } });
    expect(await other.request(`${prefix}.hang`, null, { timeoutMs: 2000 })).toMatchObject({
      ok: false,
      error: { code: ErrorCode.TRANSPORT_NO_RESPONDER },
    });
    expect(workerNc.isClosed()).toBe(false);
    expect(coreNc.isClosed()).toBe(false);
  });

  it('should close a connection it was handed over', async () => {
    const nc = await connectTestServer('redflow-test-owned');
    const transport = createNatsTransport(nc, { ownsConnection: true });
    await transport.close();
    expect(nc.isClosed()).toBe(true);
  });
});

describe('a REACT run over NATS', () => {
  /** Tools of the scripted flow: `echo`, and `fail`, which always throws. */
  function flowTools(): ToolDefinition[] {
    const failing: ToolDefinition = {
      name: 'fail',
      description: 'always fails',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      execute: () => {
        throw new Error('the backend is down');
      },
    };
    return [countingTool().tool, failing];
  }
  const answers = [answer.tool('echo', { text: 'a' }), answer.tool('fail', {}), answer.final('all done', 0.95)];

  /** Runs the scripted flow with actors served on `worker` and the core requesting on `core`. */
  async function runFlow(worker: Transport, core: Transport, ready: () => Promise<void>, traceId?: string) {
    const actors = serveActors({ transport: worker, prefix, model: createScriptedModel(answers), tools: flowTools() });
    await ready();
    const store = createMemoryEventStore();
    try {
      const run = startRun({
        agent: agentConfig({ allowedTools: ['echo', 'fail'] }),
        tools: actors.tools,
        subjects: actors.subjects,
        transport: core,
        store,
        input: { question: 'same' },
        tracePrefix: prefix,
        ...(traceId !== undefined && { traceId, clock: createSteppingClock(Date.parse('2026-05-01T12:00:00.000Z'), 3) }),
      });
      const result = await run.result;
      const { events } = await store.read(run.traceId);
      return { result, events: [...events] as AgentEvent[] };
    } finally {
      await actors.close();
    }
  }

  it('should run with the model and tools on one connection and the core on another', async () => {
    const worker = natsTransport(workerNc);
    const core = natsTransport(coreNc);
    const traced: TransportMessage[] = [];
    natsTransport(otherWorkerNc).subscribe(Subject.allTraces(prefix), (message) => traced.push(message));
    await synced(otherWorkerNc);
    const { result, events } = await runFlow(worker, core, () => synced(workerNc));
    expect(result.outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'all done' });
    expect(fold(events)).toEqual(result.envelope);
    const toolEvents = events.filter((event) => event.type === 'tool.completed');
    expect(toolEvents).toHaveLength(2);
    expect(JSON.stringify(toolEvents[1]?.data)).toContain('the backend is down');
    // Every event was published on its trace subject, as `nats sub '<prefix>.trace.>'` would show.
    await eventually(() => traced.length === events.length);
    expect(traced.map((message) => message.data)).toEqual(events);
    expect(logged).toEqual([]);
  });

  it('should write the same event log as the in-process transport (invariant 3 across modes)', async () => {
    const inProcess = createInProcessTransport();
    made.push(inProcess);
    const embedded = await runFlow(inProcess, inProcess, async () => undefined, 'fixed-trace');
    const distributed = await runFlow(natsTransport(workerNc), natsTransport(coreNc), () => synced(workerNc), 'fixed-trace');
    expect(distributed.result.outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'all done' });
    expect(distributed.events).toEqual(embedded.events);
    expect(JSON.stringify(distributed.events)).toBe(JSON.stringify(embedded.events));
  });
});
