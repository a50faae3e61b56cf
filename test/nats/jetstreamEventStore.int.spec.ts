import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { Storage, Subject } from '../../src/actors/subjects.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { parseTraceEvents } from '../../src/nats/cluster/traceEvent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { connectTestServer, eventually, uniquePrefix } from './natsSupport.js';

/** JetStream's code for a stream get that finds no message: how a read of a run learns it has read the last one. */
const NO_MESSAGE_FOUND = 10037;
const prefix = uniquePrefix();
let nc: NatsConnection;
let other: NatsConnection;
let store: JetStreamEventStore;

beforeAll(async () => {
  nc = await connectTestServer('jetstream-store-a');
  other = await connectTestServer('jetstream-store-b');
  store = await openJetStreamEventStore(nc, { prefix, storage: 'memory' });
});

afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  await nc.drain();
  await other.drain();
});

function started(traceId: string, seq = 1): AgentEvent {
  return {
    id: `${traceId}:${seq}`,
    traceId,
    seq,
    type: 'run.started',
    time: '2026-01-01T00:00:00.000Z',
    iteration: 0,
    data: { input: 'x', startedAt: '2026-01-01T00:00:00.000Z', agent: agentConfig(), tools: [] },
  } as AgentEvent;
}

function resumed(traceId: string, seq: number, time: string): AgentEvent {
  return { id: `${traceId}:${seq}`, traceId, seq, type: 'run.resumed', time, iteration: 0, data: { afterSeq: seq - 1 } } as AgentEvent;
}

async function runWith(answers: unknown[], traceId: string) {
  const echo = countingTool();
  const actors = serveActors({ model: createScriptedModel(answers), tools: [echo.tool] });
  const run = startRun({
    ...actors,
    agent: agentConfig(),
    store,
    input: 'go',
    traceId,
    clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z')),
  });
  const result = await run.result;
  await actors.close();
  return { result, calls: echo.calls };
}

describe('the JetStream event store', () => {
  it("should store each step's events in one message on the log subject of its last event, and publish each event live on its own trace subject", async () => {
    const stored: { subject: string; events: readonly AgentEvent[] }[] = [];
    const live: { subject: string; event: unknown; seq: string | undefined }[] = [];
    const logSub = other.subscribe(Subject.allLogs(prefix), {
      callback: (_error, message) => void stored.push({ subject: message.subject, events: parseTraceEvents(message.data) ?? [] }),
    });
    const liveSub = other.subscribe(Subject.allTraces(prefix), {
      callback: (_error, message) => void live.push({ subject: message.subject, event: message.json(), seq: message.headers?.get('Redflow-Seq') }),
    });
    await other.flush();
    const { result } = await runWith([answer.tool('echo', { text: 'a' }), answer.final('done')], 'live-1');
    const { events, problems } = await store.read('live-1');
    expect(problems).toEqual([]);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(fold(events)).toEqual(result.envelope);
    await eventually(() => live.length === events.length && stored.flatMap((message) => message.events).length === events.length);
    expect(stored.flatMap((message) => message.events)).toEqual(events);
    // run.started alone (runs are found by it); then what each step recorded between two effects.
    expect(stored.map((message) => message.events.map((e) => e.type))).toEqual([
      ['run.started'],
      ['model.requested'],
      ['model.answered', 'tool.requested'],
      ['tool.completed', 'model.requested'],
      ['model.answered', 'run.completed'],
    ]);
    expect(stored.map((message) => message.subject)).toEqual(stored.map((message) => `${prefix}.log.live-1.${message.events.at(-1)?.type}`));
    // Live: one message per event, in order, on the subject of its type, its seq in a header.
    expect(live.map((message) => message.event)).toEqual(events);
    expect(live.map((message) => message.subject)).toEqual(events.map((e) => `${prefix}.trace.live-1.${e.type}`));
    expect(live.map((message) => message.seq)).toEqual(events.map((e) => String(e.seq)));
    logSub.unsubscribe();
    liveSub.unsubscribe();
  });

  it('should send a tool request only once the message holding it is stored', async () => {
    const reader = await openJetStreamEventStore(other, { prefix });
    const loggedFirst: boolean[] = [];
    const probe = countingTool('echo', () => undefined);
    const tool = {
      ...probe.tool,
      async execute(input: Record<string, unknown>, context: { idempotencyKey: string; traceId: string }) {
        // What the stream holds as the call starts, read by another connection.
        const { events } = await reader.read(context.traceId);
        const last = events.at(-1);
        loggedFirst.push(last?.type === 'tool.requested' && (last.data as { idempotencyKey?: string }).idempotencyKey === context.idempotencyKey);
        return probe.tool.execute(input, context as never);
      },
    };
    const actors = serveActors({ model: createScriptedModel([answer.tool('echo', { text: 'a' }), answer.tool('echo', { text: 'b' }), answer.final('done')]), tools: [tool] });
    const { outcome } = await startRun({ ...actors, agent: agentConfig(), store, input: 'go', traceId: 'logged-first' }).result;
    await actors.close();
    expect(outcome.status).toBe('done');
    expect(loggedFirst).toEqual([true, true]);
  });

  it('should store nothing of a batch whose writer lost the run to another, 50 times', async () => {
    const rival = await openJetStreamEventStore(other, { prefix });
    for (let i = 0; i < 50; i++) {
      const traceId = `batch-race-${i}`;
      await store.append(started(traceId));
      await rival.read(traceId);
      const batch = (time: string) => [resumed(traceId, 2, time), { ...resumed(traceId, 3, time), data: { afterSeq: 2 } } as AgentEvent];
      const outcomes = await Promise.allSettled([
        store.appendMany?.(batch('2026-01-01T00:00:01.000Z')),
        rival.appendMany?.(batch('2026-01-01T00:00:02.000Z')),
      ]);
      const won = outcomes.findIndex((o) => o.status === 'fulfilled');
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')?.reason).toMatchObject({ code: ErrorCode.LOG_CONCURRENT_WRITER });
      // The loser's next message (seq 4, as if it went on) is refused too: it must stop.
      const loser = won === 0 ? rival : store;
      await expect(loser.append(resumed(traceId, 4, '2026-01-01T00:00:03.000Z'))).rejects.toMatchObject({ code: ErrorCode.LOG_CONCURRENT_WRITER });
      const stored = (await store.read(traceId)).events;
      expect(stored.map((e) => e.time)).toEqual(['2026-01-01T00:00:00.000Z', ...Array(2).fill(`2026-01-01T00:00:0${won === 0 ? 1 : 2}.000Z`)]);
    }
  }, 60_000);

  it('should let exactly one of two writers append each seq, 100 times', async () => {
    const rival = await openJetStreamEventStore(other, { prefix });
    let mine = 0;
    let theirs = 0;
    for (let i = 0; i < 100; i++) {
      const traceId = `race-${i}`;
      await store.append(started(traceId));
      await rival.read(traceId);
      const outcomes = await Promise.allSettled([
        store.append(resumed(traceId, 2, '2026-01-01T00:00:01.000Z')),
        rival.append(resumed(traceId, 2, '2026-01-01T00:00:02.000Z')),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost[0]?.reason).toMatchObject({ code: ErrorCode.LOG_CONCURRENT_WRITER });
      if (outcomes[0]?.status === 'fulfilled') mine++;
      else theirs++;
      const { events } = await store.read(traceId);
      expect(events).toHaveLength(2);
    }
    expect(mine + theirs).toBe(100);
  }, 60_000);

  it('should let its writer go on when a read of the same run by the same store ends after the writer appended more', async () => {
    // A run's log is read (a runs list, an events route, a look for unfinished runs) while the run
    // writes through the same store: such a read can end holding fewer events than are stored. Here
    // the read's last answer (no message after the last one read) is held while the run appends.
    const slow = await connectTestServer('jetstream-store-slow-read');
    let releaseRead!: () => void;
    const readHeld = new Promise<void>((resolve) => (releaseRead = resolve));
    let readEnding = false;
    const subscribe = slow.subscribe.bind(slow);
    slow.subscribe = (subject, options) => {
      const callback = options?.callback;
      if (callback === undefined) return subscribe(subject, options);
      return subscribe(subject, {
        ...options,
        callback: (error, message) => {
          if (error === null && message.string().includes(`"err_code":${NO_MESSAGE_FOUND}`)) {
            readEnding = true;
            void readHeld.then(() => callback(error, message));
            return;
          }
          void callback(error, message);
        },
      });
    };
    try {
      const writer = await openJetStreamEventStore(slow, { prefix });
      const traceId = 'read-while-writing';
      await writer.append(started(traceId));
      await writer.append(resumed(traceId, 2, '2026-01-01T00:00:01.000Z'));
      const read = writer.read(traceId);
      await expect.poll(() => readEnding).toBe(true);
      await writer.append(resumed(traceId, 3, '2026-01-01T00:00:02.000Z'));
      releaseRead();
      expect((await read).events).toHaveLength(2);
      await writer.append(resumed(traceId, 4, '2026-01-01T00:00:03.000Z'));
      expect((await store.read(traceId)).events.map((event) => event.seq)).toEqual([1, 2, 3, 4]);
    } finally {
      releaseRead();
      await slow.drain();
    }
  });

  it('should store a batch as exactly the JSON array of its events and publish each live as exactly its JSON, text beyond ASCII included', async () => {
    const traceId = 'bytes-1';
    const text = 'Grüße, 東京 🚀 "quoted" \\ \u2028';
    const batch = [started(traceId), { ...resumed(traceId, 2, '2026-01-01T00:00:01.000Z'), data: { afterSeq: 1, note: text } }, resumed(traceId, 3, '2026-01-01T00:00:02.000Z')] as AgentEvent[];
    const stored: Uint8Array[] = [];
    const live: Uint8Array[] = [];
    const logSub = other.subscribe(Subject.runLog(prefix, traceId), { callback: (_error, message) => void stored.push(message.data) });
    const liveSub = other.subscribe(`${prefix}.trace.${traceId}.>`, { callback: (_error, message) => void live.push(message.data) });
    await other.flush();
    await store.appendMany?.(batch);
    await eventually(() => stored.length === 2 && live.length === 3);
    const utf8 = (value: unknown) => Buffer.from(new TextEncoder().encode(JSON.stringify(value))).toString('hex');
    const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
    // run.started alone, then the two others together: the same bytes as encoding their array.
    expect(stored.map(hex)).toEqual([utf8(batch[0]), utf8(batch.slice(1))]);
    expect(live.map(hex)).toEqual(batch.map(utf8));
    // Another writer's identical batch (an append whose ack was lost) is recognised byte for byte.
    const fresh = await openJetStreamEventStore(other, { prefix });
    await expect(fresh.appendMany?.(batch.slice(1))).resolves.toBeUndefined();
    logSub.unsubscribe();
    liveSub.unsubscribe();
  });

  it('should accept the same event again (an append whose ack was lost) without storing it twice', async () => {
    const event = started('again');
    await store.append(event);
    const fresh = await openJetStreamEventStore(other, { prefix });
    await fresh.append(event);
    expect((await store.read('again')).events).toHaveLength(1);
  });

  it('should publish again an append the server answers 503 (a leader stepping down), and store it once', async () => {
    // A leader that loses an election while a write waits answers "raft: not leader" with status
    // 503: nothing was stored, so the append tries again with the same id until its timeout. Here
    // the stream is gone for the first attempt, which a responder answers as such a leader does,
    // putting the stream back before it answers.
    const own = uniquePrefix();
    const writer = await openJetStreamEventStore(nc, { prefix: own, storage: 'memory' });
    const jsm = await jetstreamManager(nc);
    const { config } = await jsm.streams.info(writer.stream);
    await jsm.streams.delete(writer.stream);
    let answered = 0;
    const leader = nc.subscribe(`${own}.log.>`, {
      callback: (_error, message) => {
        answered++;
        leader.unsubscribe();
        void jsm.streams.add(config).then(() => message.respond(JSON.stringify({ error: { code: 503, description: 'raft: not leader' } })));
      },
    });
    try {
      await writer.append(started('stepped-down'));

      expect(answered).toBe(1);
      expect((await writer.read('stepped-down')).events.map((event) => event.id)).toEqual(['stepped-down:1']);
    } finally {
      await jsm.streams.delete(writer.stream).catch(() => undefined);
    }
  });

  it('should resume a run from its JetStream log, repeating no completed tool call', async () => {
    const answers = [answer.tool('echo', { text: 'a' }), answer.tool('echo', { text: 'b' }), answer.final('both')];
    const whole = await runWith(answers, 'whole');
    const all = (await store.read('whole')).events;
    const cut = all.findIndex((e) => e.type === 'tool.completed') + 1;
    // Copy the first events to a new run id, as if its worker died after them.
    for (const event of all.slice(0, cut)) {
      await store.append({ ...event, traceId: 'cut', id: `cut:${event.seq}` } as AgentEvent);
    }
    const prefixEvents = (await store.read('cut')).events;
    const echo = countingTool();
    const actors = serveActors({ model: createScriptedModel(answers), tools: [echo.tool] });
    const result = await resumeRun({ ...actors, agent: agentConfig(), store, events: prefixEvents }).result;
    await actors.close();
    expect(result.outcome).toEqual(whole.result.outcome);
    expect(echo.calls).toHaveLength(1);
    const { events } = await store.read('cut');
    expect(fold(events)).toEqual(result.envelope);
  });

  it('should report a message that is not an event, and fold nothing after it', async () => {
    await store.append(started('junk'));
    // Stored once the stream acknowledges it.
    await jetstream(nc).publish(Subject.log(prefix, 'junk', 'model.requested'), new TextEncoder().encode('{"not":"an event"}'));
    const { events, problems } = await store.read('junk');
    expect(events).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code: ErrorCode.LOG_RECORD_CORRUPT, position: 2 });
  });

  it('should refuse a message of several events whole when one of them is not an event', async () => {
    await store.append(started('junk-batch'));
    const valid = resumed('junk-batch', 2, '2026-01-01T00:00:01.000Z');
    await jetstream(nc).publish(Subject.log(prefix, 'junk-batch', 'run.resumed'), new TextEncoder().encode(JSON.stringify([valid, { not: 'an event' }])));
    const { events, problems } = await store.read('junk-batch');
    expect(events).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code: ErrorCode.LOG_RECORD_CORRUPT, position: 2 });
  });

  it('should say clearly when a run has no events', async () => {
    await expect(store.read('never-ran')).rejects.toMatchObject({ code: ErrorCode.LOG_NOT_FOUND });
  });
});
