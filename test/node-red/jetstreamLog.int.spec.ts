import { existsSync } from 'node:fs';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import type { NodeRedMessage, NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { helper, loadFlow, nextMessage, withUserDir } from './nodeRedHarness.js';

const NATS_URL = process.env.NATS_URL ?? '127.0.0.1:4222';
const PREFIX = `node-red-test-${process.pid}`;

const flow: NodeRedNodeConfig[] = [
  { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['lookup'], []] },
  {
    id: 'model',
    type: 'redflow-model',
    provider: 'scripted',
    answers: [{ action: 'tool', tool: 'lookup', input: { id: 'A-1' }, confidence: 0.5 }, { action: 'final', message: 'A-1 has shipped', confidence: 0.9 }],
    wires: [],
  },
  { id: 'lookup', type: 'redflow-tool-in', name: 'lookup', inputSchema: { type: 'object' }, wires: [['body']] },
  { id: 'body', type: 'helper' },
  { id: 'lookup-out', type: 'redflow-tool-out', wires: [] },
  { id: 'answer', type: 'helper' },
];

function playToolBody(): NodeRedMessage[] {
  const calls: NodeRedMessage[] = [];
  helper.getNode('body')?.on('input', (msg: NodeRedMessage) => {
    calls.push(structuredClone(msg));
    msg.payload = { id: 'A-1', status: 'shipped' };
    helper.getNode('lookup-out')?.receive(msg);
  });
  return calls;
}

describe('an agent node whose runs are logged in JetStream (redflow.nats)', () => {
  let nc: NatsConnection;
  let userDir: string;
  let remove: () => Promise<void>;
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
  });
  afterAll(async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(Storage.traceStream(PREFIX)).catch(() => undefined);
    await nc.close();
  });
  beforeEach(async () => ({ userDir, remove } = await withUserDir()));
  afterEach(async () => {
    await helper.unload();
    await remove();
  });

  it('appends each run to the stream, where redflow replay --nats finds it, and writes no file', async () => {
    await loadFlow(userDir, flow, {}, { nats: { servers: NATS_URL, prefix: PREFIX } });
    playToolBody();
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'where is A-1?' });
    const redflow = (await answered).redflow as { traceId: string; stream: string; logPath?: string };
    expect(redflow.stream).toBe(Storage.traceStream(PREFIX));
    expect(redflow.logPath).toBeUndefined();
    expect(existsSync(path.join(userDir, 'redflow'))).toBe(false);

    const store = await openJetStreamEventStore(nc, { prefix: PREFIX });
    const { events, problems } = await store.read(redflow.traceId);
    await store.close();
    expect(problems).toEqual([]);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(events[0]?.data).toMatchObject({ flow: { id: 'agent' } });

    const described = (await helper.request().get('/redflow/agents/agent').expect(200)).body as { logs: string; runs: { traceId: string; replay: string }[] };
    expect(described.logs).toContain(Storage.traceStream(PREFIX));
    expect(described.runs[0]).toMatchObject({
      traceId: redflow.traceId,
      replay: expect.stringContaining(`--nats ${NATS_URL} --prefix ${PREFIX}`),
      lastAction: { kind: 'answer', status: 'done', answer: 'A-1 has shipped' },
    });
  });

  it('continues on start a run the stream holds unfinished, once', async () => {
    // A whole run, copied under another trace id up to its tool request: what a Node-RED that died mid-call leaves.
    await loadFlow(userDir, flow, {}, { nats: { servers: NATS_URL, prefix: PREFIX } });
    playToolBody();
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'where is A-1?' });
    const { traceId } = (await answered).redflow as { traceId: string };
    await helper.unload();
    const store = await openJetStreamEventStore(nc, { prefix: PREFIX });
    const { events } = await store.read(traceId);
    const crashed = `${traceId.slice(0, -4)}dead`;
    const cut = events.findIndex((event) => event.type === 'tool.requested') + 1;
    for (const event of events.slice(0, cut)) {
      const copy = JSON.parse(JSON.stringify(event).replaceAll(traceId, crashed)) as AgentEvent;
      await store.append(copy);
    }

    await loadFlow(userDir, flow, {}, { nats: { servers: NATS_URL, prefix: PREFIX } });
    const calls = playToolBody();
    const msg = await nextMessage('answer');
    expect(msg.redflow).toMatchObject({ traceId: crashed, resumed: true, outcome: { status: 'done' } });
    expect(calls.map((call) => (call.redflow as { idempotencyKey: string }).idempotencyKey)).toEqual([`${crashed}:1`]);
    const after = await store.read(crashed);
    expect(after.events.filter((event) => event.type === 'run.completed')).toHaveLength(1);
    await helper.unload();

    // Started again: nothing left to continue.
    await loadFlow(userDir, flow, {}, { nats: { servers: NATS_URL, prefix: PREFIX } });
    const again = playToolBody();
    await expect(nextMessage('answer', 500)).rejects.toThrow(/no message/);
    expect(again).toHaveLength(0);
    await store.close();
  });

  it('gives a run\'s events from the stream through the admin routes, and takes the answer of a run parked there', async () => {
    await loadFlow(userDir, flow.map((node) => (node.id === 'agent' ? { ...node, requiresApproval: ['lookup'] } : node)), {}, { nats: { servers: NATS_URL, prefix: PREFIX } });
    playToolBody();
    const answered = nextMessage('answer');
    const { traceId } = (await helper.request().post('/redflow/agents/agent/runs').send({ input: 'where is A-1?' }).expect(201)).body as { traceId: string };
    const eventsOf = async () => (await helper.request().get(`/redflow/runs/${traceId}/events`).expect(200)).body as { running: boolean; events: AgentEvent[] };
    const parkedAt = async () => {
      const found = await eventsOf();
      return found.running ? undefined : found.events.at(-1)?.type;
    };
    await expect.poll(parkedAt, { timeout: 5_000 }).toBe('tool.requested');
    await helper.request().post(`/redflow/runs/${traceId}/answer`).send({ kind: 'approval', approved: true }).expect(202);
    expect(((await answered).redflow as { outcome: { status: string } }).outcome.status).toBe('done');
    const { events } = await eventsOf();
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['tool.approved', 'tool.completed', 'run.completed']));
    // The agent's run list, read from the stream: the run, ended, with its last seq.
    const { runs } = (await helper.request().get('/redflow/runs?limit=50').expect(200)).body as { runs: { traceId: string; status: string; lastSeq: number; outcome?: { status: string } }[] };
    expect(runs.find((run) => run.traceId === traceId)).toMatchObject({ status: 'finished', lastSeq: events.at(-1)?.seq, outcome: { status: 'done' } });
    // A run the stream does not hold.
    await helper.request().get('/redflow/runs/0123456789abcdef0123456789abcdef/events').expect(404);
  });

  it('refuses to run, with a red status, when the NATS server cannot be reached', async () => {
    await loadFlow(userDir, flow, {}, { nats: { servers: '127.0.0.1:1', prefix: PREFIX, timeoutMs: 500 } });
    const agent = helper.getNode('agent') as unknown as { status: { args: [{ fill?: string; text?: string }][] }; error: { args: unknown[][] } };
    await expect.poll(() => agent.status.args.map(([status]) => status.text).join('\n'), { timeout: 5_000 }).toContain('TRANSPORT_CONNECT_FAILED');
  });
});
