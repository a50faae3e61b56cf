import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInbox, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Subject } from '../../src/actors/subjects.js';
import { NatsHeader } from '../../src/nats/natsTransport.js';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { requestRunAbort } from '../../src/nats/cluster/runAborts.js';
import { connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, exited, removePrefix, startWorkerProcess } from './clusterSupport.js';

// Aborts in distributed mode: every core worker hears `<prefix>.runs.abort.<traceId>`, only the
// owner of the run answers and aborts it. Two core workers run in this process (the tool waits
// at a gate the test holds, so a run stays under way); the last test uses a real worker process.

const flowPath = path.join(ROOT, 'test/fixtures/natsBackend/flows/gated.json');
const prefix = uniquePrefix();
const gateHolder = globalThis as { __natsBackendGate?: Promise<void> };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

let clientNc: NatsConnection;
const connections: NatsConnection[] = [];
const cores: CoreWorker[] = [];
let actors: ActorWorker;
let release: () => void = () => undefined;

beforeAll(async () => {
  clientNc = await connectTestServer('abort-client');
  const actorNc = await connectTestServer('abort-actors');
  connections.push(actorNc);
  actors = await startActorWorker({ nc: actorNc, flowPath, prefix, roles: ['model', 'tool'] });
  for (const owner of ['core-a', 'core-b']) {
    const nc = await connectTestServer(owner);
    connections.push(nc);
    cores.push(await startCoreWorker({ nc, flowPath, prefix, owner, leaseMs: 1000 }));
  }
});

afterAll(async () => {
  release();
  for (const core of cores) await core.close();
  await actors?.close();
  await removePrefix(clientNc, prefix);
  await Promise.all([clientNc, ...connections].map((nc) => nc.drain()));
});

function holdGate(): void {
  let open: () => void = () => undefined;
  gateHolder.__natsBackendGate = new Promise<void>((resolve) => (open = resolve));
  release = () => {
    gateHolder.__natsBackendGate = undefined;
    open();
  };
}

/** Starts a run and resolves once its tool call is under way (held at the gate). */
async function runAtTheGate() {
  const live: AgentEvent[] = [];
  const run = await startRemoteRun({ nc: clientNc, prefix, input: 'go', onEvent: (event) => live.push(event) });
  await eventually(() => live.some((event) => event.type === 'tool.requested'), 5000);
  return { run, live };
}

/** Sends one request and collects every reply that comes within `ms`. */
async function allReplies(subject: string, payload: Uint8Array, ms = 400): Promise<Msg[]> {
  const inbox = createInbox();
  const replies: Msg[] = [];
  const sub = clientNc.subscribe(inbox, { callback: (error, msg) => void (error || replies.push(msg)) });
  clientNc.publish(subject, payload, { reply: inbox });
  await new Promise((resolve) => setTimeout(resolve, ms));
  sub.unsubscribe();
  return replies;
}

describe('aborting a run on the cluster', () => {
  it('should abort a run through the core worker that owns it, the other workers staying silent', async () => {
    holdGate();
    const { run } = await runAtTheGate();
    const owner = cores.find((core) => core.runs().includes(run.traceId));
    expect(owner).toBeDefined();
    const replies = await allReplies(Subject.runAbort(prefix, run.traceId), encoder.encode(JSON.stringify({ reason: 'enough' })));
    expect(replies).toHaveLength(1);
    expect(JSON.parse(decoder.decode(replies[0]?.data))).toEqual({ aborted: true, owner: owner?.owner });
    const { outcome } = await run.result;
    expect(outcome).toMatchObject({ status: 'blocked', reason: 'aborted', error: { code: ErrorCode.RUN_ABORTED, message: 'the run was aborted: enough' } });
    await eventually(() => !owner?.runs().includes(run.traceId));
    release();
  });

  it('should answer nothing for a run no core worker owns', async () => {
    await expect(requestRunAbort(clientNc, prefix, 'nobody-owns-this', {}, 300)).resolves.toEqual({ kind: 'unanswered' });
    // Nor when no core worker listens at all (another prefix).
    await expect(requestRunAbort(clientNc, uniquePrefix(), 'nobody-owns-this', {}, 300)).resolves.toEqual({ kind: 'unanswered' });
  });

  it('should refuse a bad abort request for a run it owns, and let the run go on', async () => {
    holdGate();
    const { run } = await runAtTheGate();
    const subject = Subject.runAbort(prefix, run.traceId);
    for (const payload of ['not json', '[1]', '{"reason":5}', JSON.stringify({ reason: 'x'.repeat(1001) })]) {
      const replies = await allReplies(subject, encoder.encode(payload), 200);
      expect(replies, payload).toHaveLength(1);
      expect(replies[0]?.headers?.get(NatsHeader.Error)).toBe(ErrorCode.TRANSPORT_BAD_MESSAGE);
    }
    await expect(requestRunAbort(clientNc, prefix, run.traceId, { reason: 5 } as unknown as { reason: string })).rejects.toMatchObject({
      code: ErrorCode.TRANSPORT_BAD_MESSAGE,
    });
    release();
    expect((await run.result).outcome.reason).toBe('final_answer');
  });

  it('should abort an empty request too, with no reason', async () => {
    holdGate();
    const { run } = await runAtTheGate();
    const replies = await allReplies(Subject.runAbort(prefix, run.traceId), new Uint8Array(0));
    expect(replies).toHaveLength(1);
    expect((await run.result).outcome.error?.message).toBe('the run was aborted');
    release();
  });
});

describe('aborting a run on a real core worker process', () => {
  const slowPrefix = uniquePrefix();
  let worker: ChildProcess | undefined;

  afterAll(async () => {
    worker?.kill('SIGTERM');
    if (worker) await exited(worker);
    await removePrefix(clientNc, slowPrefix);
  });

  it('should abort a run whose tool call is under way', async () => {
    // test/fixtures/slow: a tool that waits 30 s.
    worker = await startWorkerProcess(path.join(ROOT, 'test/fixtures/slow/flow.json'), 'core,model,tool', { prefix: slowPrefix });
    const live: AgentEvent[] = [];
    const run = await startRemoteRun({ nc: clientNc, prefix: slowPrefix, input: 'wait', onEvent: (event) => live.push(event) });
    await eventually(() => live.some((event) => event.type === 'tool.requested'), 5000);
    const answer = await requestRunAbort(clientNc, slowPrefix, run.traceId, { reason: 'stop waiting' });
    expect(answer).toMatchObject({ kind: 'aborting' });
    const { outcome } = await run.result;
    expect(outcome).toMatchObject({ reason: 'aborted', error: { message: 'the run was aborted: stop waiting' } });
  }, 20_000);
});
