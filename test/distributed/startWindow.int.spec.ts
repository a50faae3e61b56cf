import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix } from './clusterSupport.js';

// The moment between a core worker storing a run's first event and answering its client's start:
// a worker that dies there must leave neither a run nobody follows nor a client waiting forever.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();

let clientNc: NatsConnection;
let actorNc: NatsConnection;
let actors: ActorWorker;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  clientNc = await connectTestServer('start-window-client');
  actorNc = await connectTestServer('start-window-actors');
  actors = await startActorWorker({ nc: actorNc, flowPath, prefix, roles: ['model', 'tool', 'memory'] });
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await actors.close();
  await removePrefix(clientNc, prefix);
  await actorNc.drain();
  await clientNc.drain();
});

describe("a core worker that dies after storing a run's first event, before answering its start", () => {
  it('should leave a run the client follows to its end, taken over by another core worker, its start stored once', async () => {
    // This worker's connection is closed the moment the run's first event is stored: its answer to the start never goes out.
    const doomed = await connectTestServer('start-window-doomed');
    const first: CoreWorker = await startCoreWorker({
      nc: doomed,
      flowPath,
      prefix,
      owner: 'doomed',
      leaseMs: 600,
      onEvent: (event) => {
        if (event.type === 'run.started') void doomed.close();
      },
    });
    // Not awaited: its run, cut off from NATS, would wait out its append timeout first.
    cleanups.push(async () => void first.close());

    const started = startRemoteRun({ nc: clientNc, prefix, input: 'go', traceId: 'start-window-1', startTimeoutMs: 1500 });
    // Another core worker, there to take the run over once the dead one's lease runs out.
    await doomed.closed();
    const secondNc = await connectTestServer('start-window-second');
    const second = await startCoreWorker({ nc: secondNc, flowPath, prefix, owner: 'second', leaseMs: 600 });
    cleanups.push(() => second.close(), () => secondNc.drain());

    const run = await started;
    const { outcome } = await run.result;
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'bumped three times' });
    const store = await openJetStreamEventStore(clientNc, { prefix });
    const { events, problems } = await store.read('start-window-1');
    await store.close();
    expect(problems).toEqual([]);
    expect(events.filter((event) => event.type === 'run.started')).toHaveLength(1);
    expect(events.some((event) => event.type === 'run.resumed')).toBe(true);
  }, 60_000);

  it('should not take another run under the same trace id for its own when its start goes unanswered: TRANSPORT_TIMEOUT', async () => {
    // The run start-window-1 has ended (above); now a start of another input under its trace id
    // reaches a worker that never answers (it hangs, or dies before storing anything).
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    const silent = clientNc.subscribe(`${prefix}.runs.start`, { callback: () => undefined });
    try {
      const error = await startRemoteRun({ nc: clientNc, prefix, input: 'something else', traceId: 'start-window-1', startTimeoutMs: 500 }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toMatchObject({ code: ErrorCode.TRANSPORT_TIMEOUT });
    } finally {
      silent.unsubscribe();
    }
  }, 60_000);
});
