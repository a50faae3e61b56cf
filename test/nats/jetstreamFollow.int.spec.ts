import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage, Subject } from '../../src/actors/subjects.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { asRun, describeFollowContract, drain, recordedRun, within } from '../events/followContract.js';
import { connectNats } from '../../src/nats/connect.js';
import { startCuttableProxy } from './cuttableProxy.js';
import { NATS_URL, connectTestServer, uniquePrefix } from './natsSupport.js';

// The follow contract and the interleaving property against the nats-server on 127.0.0.1:4222.

const prefix = uniquePrefix();
let nc: NatsConnection;
let writerNc: NatsConnection;
/** Followed through its own connection: the followers are not the writer. */
let store: JetStreamEventStore;
let writer: JetStreamEventStore;

beforeAll(async () => {
  nc = await connectTestServer('jetstream-follow');
  writerNc = await connectTestServer('jetstream-follow-writer');
  writer = await openJetStreamEventStore(writerNc, { prefix, storage: 'memory' });
  store = await openJetStreamEventStore(nc, { prefix, storage: 'memory' });
});

afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  await nc.drain();
  await writerNc.drain();
});

describeFollowContract('JetStream store', async () => ({ store, append: (event) => writer.append(event), close: async () => undefined }));

/** The consumers the trace stream has now. */
async function consumerCount(): Promise<number> {
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.info(Storage.traceStream(prefix))).state.consumer_count;
}

describe('following a run in JetStream', () => {
  let template: readonly AgentEvent[];

  beforeAll(async () => {
    template = await recordedRun();
  });

  it('should leave no consumer behind once a follow ends, is aborted or broken out of', async () => {
    const run = asRun(template, 'consumers');
    for (const event of run.slice(0, 4)) await writer.append(event);
    const before = await consumerCount();
    const controller = new AbortController();
    const waiting = drain(store.follow('consumers', 0, { signal: controller.signal }));
    await expect.poll(consumerCount, { timeout: 5000 }).toBe(before + 1);
    controller.abort();
    await within(waiting, 5000);
    for await (const _event of store.follow('consumers', 0)) break;
    for (const event of run.slice(4)) await writer.append(event);
    expect(await within(drain(store.follow('consumers', 0)), 5000)).toEqual(run);
    await expect.poll(consumerCount, { timeout: 5000 }).toBe(before);
  });

  it('should end with the problem code at a message on the run subjects that is not its next event', async () => {
    const run = asRun(template, 'garbage');
    for (const event of run.slice(0, 3)) await writer.append(event);
    const got: AgentEvent[] = [];
    const following = (async () => {
      for await (const event of store.follow('garbage', 0)) got.push(event);
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    await expect.poll(() => got.length, { timeout: 5000 }).toBe(3);
    // Anyone allowed to publish on the trace subjects can put a message in the stream.
    const js = (await import('@nats-io/jetstream')).jetstream(writerNc);
    await js.publish(Subject.log(prefix, 'garbage', 'model.answered'), JSON.stringify({ ...run[5], traceId: 'garbage' }));
    const error = await within(following, 5000);
    expect(error).toBeInstanceOf(RedflowError);
    expect((error as RedflowError).code).toBe(ErrorCode.LOG_SEQUENCE_GAP);
    expect(got).toEqual(run.slice(0, 3));
  });

  it('should go on after its connection drops and comes back, each event once and in order (the ordered consumer is recreated where it was)', async () => {
    const proxy = await startCuttableProxy(NATS_URL);
    const cutNc = await connectNats({ servers: proxy.url, name: 'jetstream-follow-cut', timeoutMs: 2000 });
    try {
      const cutStore = await openJetStreamEventStore(cutNc, { prefix });
      const run = asRun(template, 'reconnect');
      for (const event of run.slice(0, 3)) await writer.append(event);
      const got: AgentEvent[] = [];
      const following = (async () => {
        for await (const event of cutStore.follow('reconnect', 0)) got.push(event);
      })().catch((error: unknown) => error);
      await expect.poll(() => got.length, { timeout: 5000 }).toBe(3);
      proxy.cut();
      // Stored while the follower is away: it has them when it is back, none twice.
      for (const event of run.slice(3, 7)) await writer.append(event);
      await new Promise((resolve) => setTimeout(resolve, 500));
      proxy.open();
      await expect.poll(() => got.length, { timeout: 20_000 }).toBe(7);
      for (const event of run.slice(7)) await writer.append(event);
      expect(await within(following, 10_000)).toBeUndefined();
      expect(got).toEqual(run);
    } finally {
      await cutNc.close();
      await proxy.close();
    }
  }, 60_000);

  it('should get the events the server sent into a half-open connection once the client is back, though the run writes nothing more', async () => {
    const proxy = await startCuttableProxy(NATS_URL);
    const cutNc = await connectNats({ servers: proxy.url, name: 'jetstream-follow-half-open', timeoutMs: 2000 });
    try {
      const cutStore = await openJetStreamEventStore(cutNc, { prefix });
      const run = asRun(template, 'half-open');
      for (const event of run.slice(0, 3)) await writer.append(event);
      const got: AgentEvent[] = [];
      const following = (async () => {
        for await (const event of cutStore.follow('half-open', 0)) got.push(event);
      })().catch((error: unknown) => error);
      await expect.poll(() => got.length, { timeout: 5000 }).toBe(3);
      // The server still has the follower's connection and its waiting pull: the rest of the run,
      // its ending too, goes into it and is lost; nothing is written after.
      proxy.cutClientSide();
      for (const event of run.slice(3)) await writer.append(event);
      await new Promise((resolve) => setTimeout(resolve, 500));
      proxy.open();
      expect(await within(following, 15_000)).toBeUndefined();
      expect(got).toEqual(run);
    } finally {
      await cutNc.close();
      await proxy.close();
    }
  }, 60_000);

  it('should follow interleaved appends of many runs, each event exactly once and in order, whenever each follower starts', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        // Each run's length (a prefix of the recorded run, the whole run when it ends) and where
        // its follower starts: after how many appends of all the runs, and after which seq.
        fc.array(fc.record({ whole: fc.boolean(), length: fc.nat(), startAfter: fc.nat(), afterSeq: fc.nat() }), { minLength: 2, maxLength: 6 }),
        fc.infiniteStream(fc.nat()),
        async (shapes, picks) => {
          round += 1;
          const runs = shapes.map((shape, i) => {
            const length = shape.whole ? template.length : 1 + (shape.length % (template.length - 1));
            return asRun(template, `prop-${round}-${i}`).slice(0, length);
          });
          const total = runs.reduce((sum, run) => sum + run.length, 0);
          // An interleaving of the runs' appends, each run's in its own order.
          const next = runs.map(() => 0);
          const schedule: number[] = [];
          const pick = picks[Symbol.iterator]();
          while (schedule.length < total) {
            const open = runs.map((run, i) => i).filter((i) => (next[i] as number) < (runs[i] as AgentEvent[]).length);
            const chosen = open[(pick.next().value as number) % open.length] as number;
            schedule.push(chosen);
            next[chosen] = (next[chosen] as number) + 1;
          }
          const followers = shapes.map((shape, i) => ({
            startAfter: shape.startAfter % (total + 1),
            afterSeq: shape.afterSeq % ((runs[i] as AgentEvent[]).length + 2),
            controller: new AbortController(),
            got: [] as AgentEvent[],
            done: undefined as Promise<void> | undefined,
          }));
          const start = (i: number) => {
            const follower = followers[i] as (typeof followers)[number];
            const traceId = (runs[i] as AgentEvent[])[0]?.traceId as string;
            follower.done = (async () => {
              for await (const event of store.follow(traceId, follower.afterSeq, { signal: follower.controller.signal })) follower.got.push(event);
            })();
          };
          const appended = runs.map(() => 0);
          for (let step = 0; step <= total; step++) {
            followers.forEach((follower, i) => follower.startAfter === step && start(i));
            if (step === total) break;
            const i = schedule[step] as number;
            await writer.append((runs[i] as AgentEvent[])[appended[i] as number] as AgentEvent);
            appended[i] = (appended[i] as number) + 1;
          }
          // Each follower has, in the end, exactly its run's events after its seq; a follower of a
          // run that ended stops by itself, the others are stopped once they have it all.
          for (const [i, follower] of followers.entries()) {
            const run = runs[i] as AgentEvent[];
            const expected = run.slice(Math.min(follower.afterSeq, run.length));
            await expect.poll(() => follower.got.length, { timeout: 10_000 }).toBe(expected.length);
            const ended = shapes[i]?.whole === true;
            // A follower of a run that ended is done within 5 s; any other is still following after 100 ms.
            expect(await within(follower.done as Promise<void>, ended ? 5000 : 100)).toBe(ended ? undefined : 'pending');
            if (!ended) {
              follower.controller.abort();
              await within(follower.done as Promise<void>, 5000);
            }
            expect(follower.got).toEqual(expected);
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 240_000);
});
