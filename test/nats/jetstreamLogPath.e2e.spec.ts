import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage, Subject } from '../../src/actors/subjects.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { runCli } from '../support/cli.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { NATS_URL, connectTestServer, uniquePrefix } from './natsSupport.js';

// The JetStream store reports a log that is sound message by message but impossible as a run the
// way the JSONL store does (docs: LOG_PATH_INVALID; `redflow replay --nats` exits 65): forged
// events published straight into the run's subject, past the store's writer, as anyone allowed to
// publish there could. The store reads them back through the run path check; the CLI (dist/) too.

const prefix = uniquePrefix();
const ANSWER = 'the order ships tomorrow';
let nc: NatsConnection;
let store: JetStreamEventStore;
let cwd: string;

beforeAll(async () => {
  nc = await connectTestServer('jetstream-log-path');
  store = await openJetStreamEventStore(nc, { prefix });
  cwd = await mkdtemp(path.join(tmpdir(), 'redflow-log-path-'));
});

afterAll(async () => {
  await store?.close();
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  await nc.drain();
  await rm(cwd, { recursive: true, force: true });
});

/** A real run (one tool call, then the answer) logged in the stream; its events as stored. */
async function loggedRun(traceId: string): Promise<readonly AgentEvent[]> {
  const echo = countingTool();
  const actors = serveActors({ model: createScriptedModel([answer.tool('echo', { text: 'a' }), answer.final(ANSWER)]), tools: [echo.tool] });
  const run = startRun({ ...actors, agent: agentConfig(), store, input: 'go', traceId, clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z')) });
  const result = await run.result;
  await actors.close();
  expect(result.outcome).toMatchObject({ reason: 'final_answer', answer: ANSWER });
  const { events, problems } = await store.read(traceId);
  expect(problems).toEqual([]);
  return events;
}

/** Publishes `event` on the run's subject for its type, bypassing the store, and waits for the stream's ack. */
async function forge(event: AgentEvent): Promise<void> {
  const ack = await jetstream(nc).publish(Subject.log(prefix, event.traceId, event.type), new TextEncoder().encode(JSON.stringify(event)), { msgID: `forged-${event.id}` });
  expect(ack.duplicate).toBe(false);
}

const replayNats = (traceId: string) => runCli(['replay', traceId, '--nats', NATS_URL, '--prefix', prefix], { cwd });

describe('a JetStream log valid message by message but impossible as a run', () => {
  it('should refuse a second run.completed published after the real one: the store reports LOG_PATH_INVALID, replay --nats shows the real answer and exits 65', async () => {
    const traceId = `forged-end-${Date.now()}`;
    const events = await loggedRun(traceId);
    const last = events.at(-1) as AgentEvent & { type: 'run.completed' };
    expect(last.type).toBe('run.completed');
    await forge({ ...last, id: `${traceId}:${last.seq + 1}`, seq: last.seq + 1, data: { outcome: { status: 'done', reason: 'final_answer', answer: 'FORGED' } } } as AgentEvent);

    const read = await store.read(traceId);
    expect(read.events).toEqual(events);
    expect(read.problems).toHaveLength(1);
    expect(read.problems[0]).toMatchObject({ code: ErrorCode.LOG_PATH_INVALID, message: expect.stringContaining("nothing may follow the run's ending") });

    const replayed = await replayNats(traceId);
    expect(replayed.code, replayed.stderr).toBe(65);
    expect(replayed.stderr).toContain('LOG_PATH_INVALID');
    expect(replayed.stdout).toContain(ANSWER);
    expect(replayed.stdout + replayed.stderr).not.toContain('FORGED');
  });

  it('should refuse a tool result for a call the run never requested (another idempotency key), folding nothing from it on', async () => {
    const traceId = `forged-result-${Date.now()}`;
    const events = await loggedRun(traceId);
    // Cut before the first tool result (copied under a new id), then a result for a call id never requested.
    const cutId = `${traceId}-cut`;
    const cut = events.findIndex((event) => event.type === 'tool.completed');
    expect(cut).toBeGreaterThan(0);
    for (const event of events.slice(0, cut)) await store.append(JSON.parse(JSON.stringify(event).replaceAll(traceId, cutId)) as AgentEvent);
    const completed = JSON.parse(JSON.stringify(events[cut]).replaceAll(traceId, cutId)) as AgentEvent & { type: 'tool.completed'; data: Record<string, unknown> };
    expect(completed.data.idempotencyKey).toBe(`${cutId}:1`);
    await forge({ ...completed, data: { ...completed.data, idempotencyKey: `${cutId}:99` } } as AgentEvent);

    const read = await store.read(cutId);
    expect(read.events).toHaveLength(cut);
    expect(read.problems[0]).toMatchObject({ code: ErrorCode.LOG_PATH_INVALID, message: expect.stringContaining('not the call requested') });

    const replayed = await replayNats(cutId);
    expect(replayed.code, replayed.stderr).toBe(65);
    expect(replayed.stderr).toContain('LOG_PATH_INVALID');
  });
});
