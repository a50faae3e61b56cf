// Data past the answer limits reaching a core worker over NATS: a run start whose input nests too
// deep is refused at the start (no record, no log), and a tool reply nesting too deep becomes a
// failed observation while the run goes on. Both used to crash the core (RangeError) after the
// start was acknowledged.
import path from 'node:path';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix } from './clusterSupport.js';

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
const encoder = new TextEncoder();

/** `depth` nested arrays as JSON text: JSON.stringify itself overflows on such a value. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

let clientNc: NatsConnection;
let coreNc: NatsConnection;
let actorNc: NatsConnection;
let core: CoreWorker;
let actors: ActorWorker;
let deepTool: Subscription;
const coreLog: string[] = [];

beforeAll(async () => {
  clientNc = await connectTestServer('client');
  coreNc = await connectTestServer('core');
  actorNc = await connectTestServer('actors');
  // The model only: the tool is answered below, by a worker replying with deep JSON.
  actors = await startActorWorker({ nc: actorNc, flowPath, prefix, roles: ['model'] });
  core = await startCoreWorker({ nc: coreNc, flowPath, prefix, owner: 'core-limits', log: (line) => coreLog.push(line) });
  deepTool = clientNc.subscribe(`${prefix}.tool.bump`, {
    queue: 'tool',
    callback: (error, message) => {
      if (!error) message.respond(encoder.encode(`{"ok":true,"output":{"rows":${nested(20_000)}}}`));
    },
  });
  await clientNc.flush();
});

afterAll(async () => {
  deepTool.unsubscribe();
  await core.close();
  await actors.close();
  await removePrefix(clientNc, prefix);
  await Promise.all([coreNc, actorNc, clientNc].map((nc) => nc.drain()));
});

describe('a core worker and data past the limits', () => {
  it('should refuse a run start whose input nests 20,000 deep with RUN_INPUT_TOO_DEEP, leaving no run record and no log', async () => {
    const traceId = 'too-deep-start';
    const reply = await clientNc.request(`${prefix}.runs.start`, encoder.encode(`{"traceId":"${traceId}","input":${nested(20_000)}}`), { timeout: 5000 });
    expect(reply.headers?.get('Redflow-Error')).toBe('RUN_INPUT_TOO_DEEP');
    expect(new TextDecoder().decode(reply.data)).toContain('64 levels');

    const runs = await new Kvm(clientNc).open(Storage.runsBucket(prefix));
    expect(await runs.get(traceId)).toBeNull();
    const store = await openJetStreamEventStore(clientNc, { prefix });
    await expect(store.read(traceId)).rejects.toMatchObject({ code: 'LOG_NOT_FOUND' });
    expect(core.runs()).toEqual([]);
    expect(coreLog.join('\n')).not.toContain('RangeError');
  });

  it('should record a tool reply nested 20,000 deep as a failed call (TOOL_OUTPUT_TOO_DEEP), and finish the run', async () => {
    const run = await startRemoteRun({ nc: clientNc, prefix, input: 'go' });
    const { outcome, envelope } = await run.result;
    expect(outcome).toMatchObject({ status: 'done', reason: 'final_answer' });
    const { events } = await (await openJetStreamEventStore(clientNc, { prefix })).read(run.traceId);
    const completed = events.filter((event) => event.type === 'tool.completed');
    expect(completed).toHaveLength(3);
    for (const event of completed) expect(event.data).toMatchObject({ ok: false, error: { code: 'TOOL_OUTPUT_TOO_DEEP' } });
    expect(envelope.tools.history).toHaveLength(3);
    expect(coreLog.join('\n')).not.toContain('RangeError');
  });
});
