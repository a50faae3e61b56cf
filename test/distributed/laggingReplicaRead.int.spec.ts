import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { agentConfig } from '../support/harness.js';
import { uniquePrefix } from '../nats/natsSupport.js';
import { startNatsCluster, streamLeader, streamSettled, type NatsCluster } from './natsCluster.js';

// nats-server places the consumer a read of a run's log goes through on any replica of the trace
// stream, at random; a replica catching up after a pause holds fewer messages, and a read served by
// it ended early, as if the log were whole: a run that had ended read as unfinished (a rolling
// restart of the long fault profile), and a worker taking a run over would go on from a stale point.

const prefix = uniquePrefix();
/** Messages of other runs written while one replica is paused: what it has to catch up on. */
const FILLER_MESSAGES = 150;
const READS = 24;
let cluster: NatsCluster;
let nc: NatsConnection;
let shared: JetStreamEventStore;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await connectNats({ servers: cluster.urls.split(','), name: 'lagging-replica' });
  // A cluster that has just formed may answer its first JetStream requests with 503 for a moment.
  for (let tries = 0; ; tries++) {
    try {
      shared = await openJetStreamEventStore(nc, { prefix, replicas: 3 });
      break;
    } catch (error) {
      if (tries > 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}, 90_000);

afterAll(async () => {
  for (const server of cluster?.servers ?? []) cluster.resume(server.name);
  for (const close of closers) await close().catch(() => undefined);
  await shared?.close();
  await nc?.close();
  await cluster?.close();
});

function runEvents(traceId: string, count: number): AgentEvent[] {
  const time = '2026-01-01T00:00:00.000Z';
  const started = { id: `${traceId}:1`, traceId, seq: 1, type: 'run.started', time, iteration: 0, data: { input: 'x', startedAt: time, agent: agentConfig(), tools: [] } };
  const resumed = Array.from({ length: count - 1 }, (_, i) => ({ id: `${traceId}:${i + 2}`, traceId, seq: i + 2, type: 'run.resumed', time, iteration: 0, data: { afterSeq: i + 1 } }));
  return [started, ...resumed] as AgentEvent[];
}

describe('a run’s log read while a replica of the trace stream catches up', () => {
  it('should read every event stored, whichever replica serves the read', async () => {
    const leader = await streamLeader(nc, shared.stream);
    const behind = cluster.servers.find((server) => server.name !== leader)!;
    // Connected to the two others: the paused one would hold the client's requests.
    const others = await connectNats({ servers: cluster.servers.filter((server) => server !== behind).map((server) => server.url), name: 'lagging-replica-writer' });
    const store = await openJetStreamEventStore(others, { prefix, replicas: 3 });
    closers.push(async () => {
      await store.close();
      await others.close();
    });
    const traceId = `lagging${Date.now()}`;
    const events = runEvents(traceId, 12);
    for (const event of events.slice(0, 4)) await store.append(event);
    // Paused while the rest is written: the two others still make a quorum, and once it runs again
    // it has the filler and then the run's last events to catch up on, in that order.
    cluster.pause(behind.name);
    try {
      const filler = new Uint8Array(900 * 1024);
      const js = jetstream(others);
      for (let i = 0; i < FILLER_MESSAGES; i++) await js.publish(`${prefix}.log.filler${i}.run.started`, filler);
      for (const event of events.slice(4)) await store.append(event);
    } finally {
      cluster.resume(behind.name);
    }

    const lengths: number[] = [];
    for (let i = 0; i < READS; i++) lengths.push((await store.read(traceId)).events.length);

    expect(lengths).toEqual(lengths.map(() => events.length));
    await streamSettled(nc, store.stream);
  }, 120_000);
});
