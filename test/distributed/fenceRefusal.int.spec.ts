import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { Subject } from '../../src/actors/subjects.js';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { startNatsServer, uniquePrefix } from '../nats/natsSupport.js';
import { agentConfig } from '../support/harness.js';
import { ROOT, removePrefix, closedAfterAll } from './clusterSupport.js';

// The JetStream store's fence refuses a writer whose write of a run's next seq is answered as a
// duplicate of a message that is not its own (LOG_CONCURRENT_WRITER). Two ways it must not turn a
// lone writer's run into an orphan: a server remembering an id it holds no run message for, and a
// core worker refused while the run's record still names it (no other worker would take it over).

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const { closers, connection } = closedAfterAll();
const decoder = new TextDecoder();

describe('the JetStream store fence and a lone writer', () => {
  it('should store a run’s next event once the server forgets an id it answered as a duplicate without holding that run message', async () => {
    const prefix = uniquePrefix();
    const nc = await connection('fence-store');
    closers.unshift(() => removePrefix(nc, prefix));
    const store = await openJetStreamEventStore(nc, { prefix, storage: 'memory', duplicateWindowMs: 1000, appendTimeoutMs: 15_000 });
    const traceId = `fence${Date.now()}`;
    const first = { id: `${traceId}:1`, traceId, seq: 1, type: 'run.started', time: '2026-01-01T00:00:00.000Z', iteration: 0, data: { input: 'x', startedAt: '2026-01-01T00:00:00.000Z', agent: agentConfig(), tools: [] } } as AgentEvent;
    await store.append(first);
    // The id of the run's seq 2 taken by a message that is not in the run's log.
    await jetstream(nc).publish(Subject.log(prefix, `other${traceId}`, 'run.started'), 'not this run', { msgID: `${traceId}:2` });
    const next = { id: `${traceId}:2`, traceId, seq: 2, type: 'run.resumed', time: '2026-01-01T00:00:01.000Z', iteration: 0, data: { afterSeq: 1 } } as AgentEvent;

    await store.append(next);

    const { events } = await store.read(traceId);
    expect(events.map((event) => event.id)).toEqual([first.id, next.id]);
  }, 30_000);

  it('should not call a writer concurrent when its retried write is answered as a duplicate while the run’s log cannot be read', async () => {
    // A server whose `writer` may not read messages back: every check of a duplicate fails, as
    // the stream's reads do in an election. That is no sign of another writer: the append waits
    // for a readable log until its timeout and then says the store is unavailable (retryable).
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-fence-'));
    const config = path.join(dir, 'nats.conf');
    await writeFile(config, `jetstream { store_dir: "${dir}" }\nauthorization { users = [\n  { user: admin, password: a }\n  { user: writer, password: w, permissions: { publish: { deny: ["$JS.API.STREAM.MSG.GET.>"] } } }\n] }\n`);
    const server = await startNatsServer(config);
    closers.push(async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    });
    const admin = await connect({ servers: server.url, user: 'admin', pass: 'a' });
    const writer = await connect({ servers: server.url, user: 'writer', pass: 'w' });
    closers.unshift(() => writer.close(), () => admin.close());
    const traceId = `unreadable${Date.now()}`;
    const events = [
      { id: `${traceId}:1`, traceId, seq: 1, type: 'run.started', time: '2026-01-01T00:00:00.000Z', iteration: 0, data: { input: 'x', startedAt: '2026-01-01T00:00:00.000Z', agent: agentConfig(), tools: [] } },
      { id: `${traceId}:2`, traceId, seq: 2, type: 'run.resumed', time: '2026-01-01T00:00:01.000Z', iteration: 0, data: { afterSeq: 1 } },
    ] as AgentEvent[];
    const stored = await openJetStreamEventStore(admin, { storage: 'memory' });
    for (const event of events) await stored.append(event);
    // The same writer's attempt at seq 2 again, as after a lost acknowledgement.
    const retrying = await openJetStreamEventStore(writer, { storage: 'memory', appendTimeoutMs: 2000 });

    await expect(retrying.append(events[1]!)).rejects.toMatchObject({ code: ErrorCode.LOG_STORE_UNAVAILABLE });
  }, 30_000);

  it('should end a run whose core worker was refused as a concurrent writer while the run’s record still named it', async () => {
    const prefix = uniquePrefix();
    const client = await connection('fence-client');
    closers.unshift(() => removePrefix(client, prefix));
    const actors = await startActorWorker({ nc: await connection('fence-actors'), flowPath, prefix, roles: ['model', 'tool'] });
    closers.push(() => actors.close());
    const said: string[] = [];
    const core = await startCoreWorker({ nc: await connection('fence-core'), flowPath, prefix, owner: 'fence-core', leaseMs: 1500, log: (line) => said.push(line) });
    closers.push(() => core.close());
    process.env.SLOW_BUMP_MS = '1500';
    try {
      const run = await startRemoteRun({ nc: client, prefix, input: 'go' });
      // The first tool call's completion written by someone else while the tool still runs: the
      // worker's own write of it is refused by the fence, and no other worker owns the run.
      const requested = await nextEvent(client, prefix, run.traceId, 'tool.requested');
      await writeCompletion(client, prefix, requested);

      const { outcome } = await run.result;

      expect(outcome.reason).toBe('final_answer');
      expect(said.join('\n')).toContain(`run ${run.traceId} left: ${ErrorCode.LOG_CONCURRENT_WRITER}`);
    } finally {
      delete process.env.SLOW_BUMP_MS;
    }
  }, 60_000);
});

/** The next event of `type` published live for a run. */
async function nextEvent(nc: NatsConnection, prefix: string, traceId: string, type: string): Promise<AgentEvent> {
  const sub = nc.subscribe(Subject.trace(prefix, traceId, type), { max: 1 });
  for await (const message of sub) return JSON.parse(decoder.decode(message.data)) as AgentEvent;
  throw new Error(`no ${type} for run ${traceId}`);
}

/** A `tool.completed` for `requested` written straight into the run's log, with the id the run's own would have. */
async function writeCompletion(nc: NatsConnection, prefix: string, requested: AgentEvent): Promise<void> {
  const data = requested.data as { tool: string; idempotencyKey: string };
  const seq = requested.seq + 1;
  const completed = { ...requested, id: `${requested.traceId}:${seq}`, seq, type: 'tool.completed', data: { tool: data.tool, idempotencyKey: data.idempotencyKey, ok: true, output: { bumped: true, by: 1 }, durationMs: 1 } };
  await jetstream(nc).publish(Subject.log(prefix, requested.traceId, 'tool.completed'), JSON.stringify(completed), { msgID: completed.id });
}
