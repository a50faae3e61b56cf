import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage, Subject } from '../../src/actors/subjects.js';
import { connectNats } from '../../src/nats/connect.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { createSharedRunFollow } from '../../src/nats/jetstream/sharedRunFollow.js';
import { asRun, drain, recordedRun, within } from '../events/followContract.js';
import { startCuttableProxy } from './cuttableProxy.js';
import { NATS_URL, connectTestServer, uniquePrefix } from './natsSupport.js';

// One consumer following many new runs for one client, against the nats-server on 127.0.0.1:4222.

const prefix = uniquePrefix();
let nc: NatsConnection;
let writerNc: NatsConnection;
let writer: JetStreamEventStore;
let template: readonly AgentEvent[];

beforeAll(async () => {
  nc = await connectTestServer('shared-follow');
  writerNc = await connectTestServer('shared-follow-writer');
  writer = await openJetStreamEventStore(writerNc, { prefix, storage: 'memory' });
  template = await recordedRun();
});

afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  await nc.drain();
  await writerNc.drain();
});

/** The consumers the trace stream has now. */
async function consumerCount(): Promise<number> {
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.info(Storage.traceStream(prefix))).state.consumer_count;
}

/** A message on run `traceId`'s subjects that is not its next event (anyone allowed to publish there can). */
async function publishStray(traceId: string, event: AgentEvent): Promise<void> {
  await jetstream(writerNc).publish(Subject.log(prefix, traceId, event.type), JSON.stringify(event));
}

describe('a shared follow of new runs', () => {
  it('should give each of many interleaved runs exactly its events, in order, through one consumer that goes once nobody follows', async () => {
    const before = await consumerCount();
    const follow = createSharedRunFollow({ nc, prefix });
    const runs = Array.from({ length: 12 }, (_, i) => asRun(template, `many-${i}`));
    const watched = await Promise.all(runs.map((run) => follow.watch(run[0]?.traceId as string)));
    const following = watched.map((events) => drain(events));
    expect(await consumerCount()).toBe(before + 1);
    // Appended interleaved, some as one message of several events (as a core worker writes a step).
    for (let at = 0; at < template.length; at += 2) {
      await Promise.all(
        runs.map(async (run, i) => {
          if (i % 2 === 0) return writer.appendMany?.(run.slice(at, at + 2));
          for (const event of run.slice(at, at + 2)) await writer.append(event);
        }),
      );
    }
    const got = await within(Promise.all(following), 10_000);
    expect(got).toEqual(runs);
    await expect.poll(consumerCount, { timeout: 10_000 }).toBe(before);
    await follow.close();
  });

  it('should refuse a run that had events before it was watched with LOG_SEQUENCE_GAP, the other runs going on', async () => {
    const follow = createSharedRunFollow({ nc, prefix });
    const early = asRun(template, 'early');
    const fresh = asRun(template, 'fresh');
    await writer.append(early[0] as AgentEvent);
    const earlyEvents = drain(await follow.watch('early')).then(() => undefined, (error: unknown) => error);
    const freshEvents = drain(await follow.watch('fresh'));
    for (const event of early.slice(1)) await writer.append(event);
    for (const event of fresh) await writer.append(event);
    const error = await within(earlyEvents, 5000);
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).code).toBe(ErrorCode.LOG_SEQUENCE_GAP);
    expect(await within(freshEvents, 5000)).toEqual(fresh);
    await follow.close();
  });

  it('should end one run\'s follow with its problem code at a stray message, and not the others\'', async () => {
    const follow = createSharedRunFollow({ nc, prefix });
    const spoiled = asRun(template, 'spoiled');
    const clean = asRun(template, 'clean');
    const got: AgentEvent[] = [];
    const spoiledEnd = (async () => {
      for await (const event of await follow.watch('spoiled')) got.push(event);
    })().then(() => undefined, (error: unknown) => error);
    const cleanEvents = drain(await follow.watch('clean'));
    for (const event of spoiled.slice(0, 3)) await writer.append(event);
    await publishStray('spoiled', spoiled[5] as AgentEvent);
    for (const event of clean) await writer.append(event);
    const error = await within(spoiledEnd, 5000);
    expect((error as RedflowError).code).toBe(ErrorCode.LOG_SEQUENCE_GAP);
    expect(got).toEqual(spoiled.slice(0, 3));
    expect(await within(cleanEvents, 5000)).toEqual(clean);
    await follow.close();
  });

  it('should end a follow whose signal aborts, and every follow once it is closed', async () => {
    const follow = createSharedRunFollow({ nc, prefix });
    const controller = new AbortController();
    const aborted = drain(await follow.watch('aborted', { signal: controller.signal }));
    const open = drain(await follow.watch('left-open'));
    const run = asRun(template, 'aborted');
    await writer.append(run[0] as AgentEvent);
    await expect.poll(async () => within(aborted, 10), { timeout: 5000 }).toBe('pending');
    controller.abort();
    expect(await within(aborted, 5000)).toEqual(run.slice(0, 1));
    expect(await within(open, 200)).toBe('pending');
    await follow.close();
    expect(await within(open, 5000)).toEqual([]);
    await expect(follow.watch('after-close')).rejects.toMatchObject({ code: ErrorCode.LOG_STORE_UNAVAILABLE });
  });

  it('should refuse a trace id that is not one, and a run watched twice', async () => {
    const follow = createSharedRunFollow({ nc, prefix });
    await expect(follow.watch('a.>')).rejects.toMatchObject({ code: ErrorCode.LOG_NOT_FOUND });
    const once = drain(await follow.watch('twice'));
    await expect(follow.watch('twice')).rejects.toMatchObject({ code: ErrorCode.RUN_TRACE_ID_TAKEN });
    await follow.close();
    expect(await within(once, 5000)).toEqual([]);
  });

  it('should go on after its connection drops and comes back, each event once and in order', async () => {
    const proxy = await startCuttableProxy(NATS_URL);
    const cutNc = await connectNats({ servers: proxy.url, name: 'shared-follow-cut', timeoutMs: 2000 });
    try {
      const follow = createSharedRunFollow({ nc: cutNc, prefix });
      const runs = [asRun(template, 'cut-a'), asRun(template, 'cut-b')];
      const got = runs.map(() => [] as AgentEvent[]);
      const watched = await Promise.all(runs.map((run) => follow.watch(run[0]?.traceId as string)));
      const following = watched.map(async (events, i) => {
        for await (const event of events) got[i]?.push(event);
      });
      for (const run of runs) for (const event of run.slice(0, 3)) await writer.append(event);
      await expect.poll(() => got.map((events) => events.length), { timeout: 5000 }).toEqual([3, 3]);
      proxy.cut();
      // Stored while the follower is away: it has them when it is back, none twice.
      for (const run of runs) for (const event of run.slice(3, 7)) await writer.append(event);
      await new Promise((resolve) => setTimeout(resolve, 500));
      proxy.open();
      await expect.poll(() => got.map((events) => events.length), { timeout: 20_000 }).toEqual([7, 7]);
      for (const run of runs) for (const event of run.slice(7)) await writer.append(event);
      await within(Promise.all(following), 10_000);
      expect(got).toEqual(runs);
      await follow.close();
    } finally {
      await cutNc.close();
      await proxy.close();
    }
  }, 60_000);
  it('should get the events the server sent into a half-open connection once the client is back, though nothing more is written', async () => {
    const proxy = await startCuttableProxy(NATS_URL);
    const cutNc = await connectNats({ servers: proxy.url, name: 'shared-follow-half-open', timeoutMs: 2000 });
    try {
      const follow = createSharedRunFollow({ nc: cutNc, prefix });
      const run = asRun(template, 'half-open');
      const got: AgentEvent[] = [];
      const events = await follow.watch('half-open');
      const following = (async () => {
        for await (const event of events) got.push(event);
      })().catch((error: unknown) => error);
      for (const event of run.slice(0, 3)) await writer.append(event);
      await expect.poll(() => got.length, { timeout: 5000 }).toBe(3);
      // The server still has the connection and its waiting pull: the rest goes into it and is lost.
      proxy.cutClientSide();
      for (const event of run.slice(3)) await writer.append(event);
      await new Promise((resolve) => setTimeout(resolve, 500));
      proxy.open();
      expect(await within(following, 15_000)).toBeUndefined();
      expect(got).toEqual(run);
      await follow.close();
    } finally {
      await cutNc.close();
      await proxy.close();
    }
  }, 60_000);
});
