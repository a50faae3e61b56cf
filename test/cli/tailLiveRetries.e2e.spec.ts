import type { NatsConnection } from '@nats-io/transport-node';
import { headers } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage, Subject } from '../../src/actors/subjects.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { killAll, startRedflow, type RedflowProcess } from '../distributed/workerProcess.js';
import { asRun, recordedRun } from '../events/followContract.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';

// `redflow tail` of every run, live, while an append is published again after its acknowledgement
// was lost (as the JetStream store does through a leader election): the stream stores it once,
// and an event that reaches the live subjects twice (a writer that published it live, then lost
// the run and an ack) is printed once.

const prefix = uniquePrefix();
let nc: NatsConnection;
let store: JetStreamEventStore;
const processes: RedflowProcess[] = [];

beforeAll(async () => {
  nc = await connectTestServer('tail-retries-e2e');
  store = await openJetStreamEventStore(nc, { prefix, storage: 'memory' });
});

afterAll(async () => {
  await killAll(processes);
  await (await jetstreamManager(nc)).streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  await nc.drain();
});

/** The publish of `event` sent again with its id, as a retry after a lost acknowledgement is. */
async function publishAgain(event: AgentEvent): Promise<{ duplicate?: boolean }> {
  const msgHeaders = headers();
  msgHeaders.set('Nats-Msg-Id', event.id);
  const reply = await nc.request(Subject.log(prefix, event.traceId, event.type), JSON.stringify(event), { headers: msgHeaders, timeout: 5000 });
  nc.publish(Subject.trace(prefix, event.traceId, event.type), JSON.stringify(event));
  return reply.json<{ duplicate?: boolean }>();
}

describe('redflow tail of every run', () => {
  it('should print an event published again with its id once, as the stream stores it', async () => {
    const run = asRun(await recordedRun(), 'tail-retried');
    const tail = startRedflow(['tail', '--json', '--nats', NATS_URL, '--prefix', prefix]);
    processes.push(tail);
    let stdout = '';
    tail.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    await tail.waitFor('following');
    for (const event of run.slice(0, 3)) await store.append(event);
    expect(await publishAgain(run[2]!)).toMatchObject({ duplicate: true });
    for (const event of run.slice(3)) await store.append(event);
    const printed = () => stdout.split('\n').filter(Boolean).map((text) => (JSON.parse(text) as AgentEvent).seq);
    await expect.poll(() => printed().at(-1), { timeout: 10_000 }).toBe(run.at(-1)!.seq);
    expect(printed()).toEqual(run.map((event) => event.seq));
    expect((await store.read('tail-retried')).events).toEqual(run);
  }, 60_000);
});
