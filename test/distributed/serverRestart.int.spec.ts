import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { eventually, startNatsServer, type PrivateNatsServer } from '../nats/natsSupport.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const flowPath = path.join(root, 'test/fixtures/cluster/flow.json');
const cleanups: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

describe('distributed mode across a nats-server restart', () => {
  it('should continue the run after the server restarts from its file store, nothing lost or duplicated', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'redflow-restart-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const config = path.join(dir, 'nats.conf');
    await writeFile(config, `jetstream { store_dir: "${path.join(dir, 'store')}" }\n`);
    let server: PrivateNatsServer = await startNatsServer(config);
    cleanups.push(() => server.stop());
    const port = Number(server.url.split(':')[1]);
    const connect = async (name: string): Promise<NatsConnection> => {
      const nc = await connectNats({ servers: server.url, name, timeoutMs: 2000 });
      cleanups.push(() => nc.close());
      return nc;
    };
    process.env.SLOW_BUMP_MS = '400';
    cleanups.push(async () => delete process.env.SLOW_BUMP_MS);
    const actors = await startActorWorker({ nc: await connect('actors'), flowPath, roles: ['model', 'tool'] });
    cleanups.push(() => actors.close());
    const core = await startCoreWorker({ nc: await connect('core'), flowPath, leaseMs: 3000, attemptTimeoutMs: 2000 });
    cleanups.push(() => core.close());
    const client = await connect('client');

    const live: AgentEvent[] = [];
    const run = await startRemoteRun({ nc: client, input: 'go', traceId: 'restart-1', onEvent: (event) => live.push(event) });
    await eventually(() => live.some((event) => event.type === 'tool.requested'), 5000);
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 500));
    server = await startNatsServer(config, {}, port);

    const { outcome } = await run.result;
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: 'bumped three times' });
    const { events, problems } = await (await openJetStreamEventStore(client)).read('restart-1');
    expect(problems).toEqual([]);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'tool.completed')).toHaveLength(3);
    expect(events.at(-1)?.type).toBe('run.completed');
  }, 60_000);
});
