// `run --inspect --nats` and `inspect <traceId> --nats`: a cluster run's events, replayed into the
// inspector as they arrive and from JetStream afterwards. Needs nats-server -js (like the other
// *.int.spec.ts); the workers run in this process, the CLI in real processes.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { replayMessages } from '../../src/inspect/index.js';
import { removePrefix } from '../distributed/clusterSupport.js';
import { connectTestServer, NATS_URL, uniquePrefix } from '../nats/natsSupport.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startReceiver, tempDir, type Receiver } from './inspectSupport.js';

const FLOW = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');
const prefix = uniquePrefix();
let nc: NatsConnection;
let actors: ActorWorker;
let core: CoreWorker;
let dir: string;
let removeDir: () => Promise<void>;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  nc = await connectTestServer('inspect-cluster');
  actors = await startActorWorker({ nc, flowPath: FLOW, prefix, roles: ['model', 'tool', 'memory'] });
  core = await startCoreWorker({ nc, flowPath: FLOW, prefix, owner: 'inspect-core', leaseMs: 1000 });
  ({ dir, remove: removeDir } = await tempDir());
});

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

afterAll(async () => {
  await core?.close().catch(() => undefined);
  await actors?.close().catch(() => undefined);
  if (nc) {
    await removePrefix(nc, prefix);
    await nc.drain();
  }
  await removeDir?.();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

const cluster = ['--nats', NATS_URL, '--prefix', prefix];

/** What the wire carries for a message: JSON, without undefined members. */
const wire = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('the inspector with a cluster', () => {
  it('run --inspect --nats replays the run into the inspector as its events arrive', async () => {
    const r = await receiver();
    const result = await runCli(['run', FLOW, '--input', 'Where is A-1001?', '--trace-id', 'cluster-inspect-1', ...cluster, '--inspect', '--inspect-url', r.url], {
      cwd: dir,
    });
    expect(result.stderr).toContain('inspector: sending to');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Order A-1001 shipped');
    const { events } = await (await openJetStreamEventStore(nc, { prefix })).read('cluster-inspect-1');
    expect(events.length).toBeGreaterThan(0);
    expect(r.messages).toEqual(replayMessages(events).map(wire));
  });

  it('inspect <traceId> --nats reads the run from JetStream; an unknown one is LOG_NOT_FOUND, exit 66', async () => {
    const r = await receiver();
    const result = await runCli(['inspect', 'cluster-inspect-1', ...cluster, '--inspect-url', r.url], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('sent run cluster-inspect-1 to the inspector');
    const { events } = await (await openJetStreamEventStore(nc, { prefix })).read('cluster-inspect-1');
    expect(r.messages).toEqual(replayMessages(events).map(wire));

    const unknown = await runCli(['inspect', 'never-ran', ...cluster, '--inspect-url', r.url], { cwd: dir });
    expect(unknown.code).toBe(66);
    expect(unknown.stderr).toMatch(/error LOG_NOT_FOUND: .*never-ran/);
  });

  it('run --inspect --nats --json is a usage error: the inspector follows the printed events', async () => {
    const result = await runCli(['run', FLOW, '--input', 'x', ...cluster, '--inspect', '--inspect-url', 'ws://127.0.0.1:9', '--json'], { cwd: dir });
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('cannot be combined with --json');
  });
});
