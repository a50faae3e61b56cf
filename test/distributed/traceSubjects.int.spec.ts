import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage, Subject } from '../../src/actors/subjects.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { listRunStarts } from '../../src/nats/serve/natsRunList.js';
import { runLogExists } from '../../src/nats/cluster/runLogExists.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import { asRun, recordedRun } from '../events/followContract.js';
import { connectTestServer, eventually, startServerWithConfig, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix } from './clusterSupport.js';

// What a plain core NATS subscriber of the trace subjects sees of a cluster's runs: each event on
// its own subject, `<prefix>.trace.<traceId>.<type>`, as the log stores it.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
let clientNc: NatsConnection;
let actorNc: NatsConnection;
let coreNc: NatsConnection;
let actors: ActorWorker;
let core: CoreWorker;

beforeAll(async () => {
  clientNc = await connectTestServer('trace-subjects-client');
  actorNc = await connectTestServer('trace-subjects-actors');
  coreNc = await connectTestServer('trace-subjects-core');
  actors = await startActorWorker({ nc: actorNc, flowPath, prefix, roles: ['model', 'tool', 'memory'] });
  core = await startCoreWorker({ nc: coreNc, flowPath, prefix, owner: 'trace-subjects-core' });
});

afterAll(async () => {
  await core.close();
  await actors.close();
  await removePrefix(clientNc, prefix);
  await coreNc.drain();
  await actorNc.drain();
  await clientNc.drain();
});

/** A plain nats.js subscription that keeps every message it gets. */
function keep(subject: string): { readonly messages: Msg[]; stop(): void } {
  const messages: Msg[] = [];
  const sub = clientNc.subscribe(subject, { callback: (_error, message) => void messages.push(message) });
  return { messages, stop: () => sub.unsubscribe() };
}

describe('the trace subjects of a cluster run, to a plain core NATS subscriber', () => {
  it('should carry every event of the run, one per message, in order, on the subject of its type, as the log stores them', async () => {
    const traceId = 'plain-1';
    const run = keep(Subject.runTrace(prefix, traceId));
    const completions = keep(Subject.trace(prefix, '*', 'tool.completed'));
    await clientNc.flush();
    const started = await startRemoteRun({ nc: clientNc, prefix, input: 'go', traceId });
    const { envelope } = await started.result;
    const store = await openJetStreamEventStore(clientNc, { prefix });
    const { events } = await store.read(traceId);
    await store.close();
    await eventually(() => run.messages.length >= events.length);
    run.stop();
    completions.stop();
    // One event per message: the payload is the event itself, not a list.
    const live = run.messages.map((message) => message.json<AgentEvent>());
    expect(live).toEqual(events);
    expect(run.messages.map((message) => message.subject)).toEqual(events.map((event) => `${prefix}.trace.${traceId}.${event.type}`));
    expect(run.messages.map((message) => [message.headers?.get('Redflow-Trace-Id'), message.headers?.get('Redflow-Seq')])).toEqual(events.map((event) => [traceId, String(event.seq)]));
    expect(fold(live)).toEqual(envelope);
    // The tool completions, each on its own.
    expect(completions.messages.map((message) => message.json<AgentEvent>())).toEqual(events.filter((event) => event.type === 'tool.completed'));
    expect(envelope.tools.history).toHaveLength(3);
  });
});

describe('a trace stream of the layout before the log subjects', () => {
  it('should be moved in place when opened: its runs replay, are listed and found, and new events go live, not into the stream', async () => {
    const oldPrefix = uniquePrefix();
    const stream = Storage.traceStream(oldPrefix);
    const jsm = await jetstreamManager(clientNc);
    // What the earlier version wrote: the stream over <prefix>.trace.>, a step's events in one message.
    await jsm.streams.add({ name: stream, subjects: [Subject.allTraces(oldPrefix)], storage: 'memory', duplicate_window: 3_600_000_000_000 });
    try {
      const old = asRun(await recordedRun(), 'old-1');
      const js = jetstream(clientNc);
      const first = old[0] as AgentEvent;
      const rest = old.slice(1);
      const idHeaders = (id: string) => {
        const h = natsHeaders();
        h.set('Nats-Msg-Id', id);
        return h;
      };
      await js.publish(Subject.trace(oldPrefix, 'old-1', first.type), JSON.stringify(first), { headers: idHeaders(first.id) });
      await js.publish(Subject.trace(oldPrefix, 'old-1', rest.at(-1)?.type ?? ''), JSON.stringify(rest), { headers: idHeaders((rest[0] as AgentEvent).id) });

      const store = await openJetStreamEventStore(clientNc, { prefix: oldPrefix });
      const info = await jsm.streams.info(stream);
      expect(info.config.subjects).toEqual([Subject.allLogs(oldPrefix)]);
      expect(info.state.messages).toBe(2);
      expect(await store.read('old-1')).toEqual({ events: old, problems: [] });
      expect(await runLogExists(clientNc, oldPrefix, 'old-1')).toBe(true);
      expect((await listRunStarts(clientNc, { prefix: oldPrefix, limit: 10 })).map((event) => event.traceId)).toEqual(['old-1']);
      // Opened again (another worker): nothing left to move.
      await (await openJetStreamEventStore(clientNc, { prefix: oldPrefix })).close();
      expect((await jsm.streams.info(stream)).state.messages).toBe(2);

      // A new run: live on the trace subjects, stored once.
      const fresh = asRun(await recordedRun(), 'new-1');
      const live = keep(Subject.allTraces(oldPrefix));
      await clientNc.flush();
      for (const event of fresh) await store.append(event);
      await eventually(() => live.messages.length === fresh.length);
      live.stop();
      expect((await jsm.streams.info(stream)).state.messages).toBe(2 + fresh.length);
      expect((await store.read('new-1')).events).toEqual(fresh);
      await store.close();
    } finally {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
  });

  it('should be refused with LOG_STREAM_OLD_LAYOUT, its log untouched, for a user that may not update the stream', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'redflow-old-layout-'));
    const server = await startServerWithConfig(
      dir,
      'no-update',
      [
        `jetstream { store_dir: "${path.join(dir, 'js')}" }`,
        'accounts { A { jetstream: enabled, users = [',
        '  { user: admin, password: admin }',
        '  { user: core, password: core, permissions: { publish: { allow: [">"], deny: ["$JS.API.STREAM.UPDATE.>"] } } }',
        '] } }',
      ].join('\n'),
    );
    const admin = await connect({ servers: server.url, user: 'admin', pass: 'admin' });
    const core = await connect({ servers: server.url, user: 'core', pass: 'core' });
    try {
      const jsm = await jetstreamManager(admin);
      await jsm.streams.add({ name: 'REDFLOW_TRACE', subjects: ['redflow.trace.>'], storage: 'memory' });
      await jetstream(admin).publish('redflow.trace.old-1.run.started', JSON.stringify(asRun(await recordedRun(), 'old-1')[0]));
      const refusal = await openJetStreamEventStore(core, { prefix: 'redflow' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(RedflowError);
      expect(refusal).toMatchObject({ code: ErrorCode.LOG_STREAM_OLD_LAYOUT });
      expect((refusal as RedflowError).hint).toMatch(/redflow\.log\.<traceId>\.<type>/);
      const info = await jsm.streams.info('REDFLOW_TRACE');
      expect([info.config.subjects, info.state.messages]).toEqual([['redflow.trace.>'], 1]);
      // An operator's user moves it; the core user then opens it.
      await (await openJetStreamEventStore(admin, { prefix: 'redflow' })).close();
      const store = await openJetStreamEventStore(core, { prefix: 'redflow' });
      expect((await store.read('old-1')).events.map((event) => event.type)).toEqual(['run.started']);
      await store.close();
    } finally {
      await core.close();
      await admin.close();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
