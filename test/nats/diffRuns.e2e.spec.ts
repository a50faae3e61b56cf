import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Storage } from '../../src/actors/subjects.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { openJetStreamEventStore, type JetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { createSteppingClock } from '../../src/runtime/clock.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { runCli } from '../support/cli.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { NATS_URL, connectTestServer, uniquePrefix } from './natsSupport.js';

// `redflow diff <traceId> <traceId> --nats`: two real runs logged in JetStream (a real server),
// compared by the CLI (dist/) as it compares two log files.

const prefix = uniquePrefix();
let nc: NatsConnection;
let store: JetStreamEventStore;
let cwd: string;

/** A real run of `answers` logged in the stream. */
async function loggedRun(traceId: string, answers: readonly unknown[]): Promise<void> {
  const actors = serveActors({ model: createScriptedModel(answers), tools: [countingTool().tool] });
  try {
    const run = startRun({ ...actors, agent: agentConfig(), store, input: 'go', traceId, clock: createSteppingClock(Date.parse('2026-01-01T00:00:00.000Z')) });
    await run.result;
  } finally {
    await actors.close();
  }
}

beforeAll(async () => {
  nc = await connectTestServer('diff-runs');
  store = await openJetStreamEventStore(nc, { prefix });
  cwd = await mkdtemp(path.join(tmpdir(), 'redflow-diff-nats-'));
  await loggedRun('diff-a', [answer.tool('echo', { text: 'a' }), answer.final('done')]);
  await loggedRun('diff-b', [answer.tool('echo', { text: 'b' }), answer.final('done')]);
});

afterAll(async () => {
  await store?.close();
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(Storage.traceStream(prefix)).catch(() => undefined);
  await nc.drain();
  await rm(cwd, { recursive: true, force: true });
});

describe('redflow diff --nats', () => {
  it('should compare two runs in JetStream by their trace ids, exit 1 when they differ, 0 for a run and itself', async () => {
    const cluster = ['--nats', NATS_URL, '--prefix', prefix];
    const differ = await runCli(['diff', 'diff-a', 'diff-b', ...cluster, '--json'], { cwd });
    expect(differ.code, differ.stderr).toBe(1);
    expect(JSON.parse(differ.stdout)).toMatchObject({ same: false, first: { iteration: 1, field: 'input', a: { text: 'a' }, b: { text: 'b' } }, runs: { a: { traceId: 'diff-a' }, b: { traceId: 'diff-b' } } });
    const same = await runCli(['diff', 'diff-a', 'diff-a', ...cluster], { cwd });
    expect(same.code, same.stderr).toBe(0);
  });

  it('should refuse a trace id with no events on the cluster as LOG_NOT_FOUND (exit 66), as for a missing file', async () => {
    const result = await runCli(['diff', 'diff-a', 'no-such-run', '--nats', NATS_URL, '--prefix', prefix], { cwd });
    expect(result.code).toBe(66);
    expect(result.stderr).toMatch(/^error LOG_NOT_FOUND: no events for run no-such-run/m);
  });
});
