import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { removePrefix } from './clusterSupport.js';
import { killAll, startRedflow, type RedflowProcess } from './workerProcess.js';

// `redflow replay <traceId> --nats <url> --steps` reads a run's steps from JetStream: a real
// `redflow worker` (all roles) runs order-status with its scripted answers on the real NATS.

const FLOW = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');
const prefix = uniquePrefix();
const cluster = ['--nats', NATS_URL, '--prefix', prefix];
const processes: RedflowProcess[] = [];
let nc: NatsConnection;
let dir: string;

beforeAll(async () => {
  nc = await connectTestServer('replay-steps');
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-replay-steps-'));
  const worker = startRedflow(['worker', FLOW, ...cluster]);
  processes.push(worker);
  await worker.ready();
});

afterAll(async () => {
  await killAll(processes);
  await removePrefix(nc, prefix);
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

describe('redflow replay --nats --steps', () => {
  it("should print a cluster run's steps from JetStream, as text and as JSON", async () => {
    const traceId = 'replay-steps-cluster-1';
    const run = await runCli(['run', FLOW, ...cluster, '--input', 'Where is order A-1001?', '--trace-id', traceId], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const [text, json] = await Promise.all([
      runCli(['replay', traceId, ...cluster, '--steps'], { cwd: dir }),
      runCli(['replay', traceId, ...cluster, '--steps', '--json'], { cwd: dir }),
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.match(/^── #\d ──$/gm)).toEqual(['── #1 ──', '── #2 ──', '── #3 ──']);
    expect(text.stdout).toContain('  verdict: valid tool call (track_shipment)');
    expect(text.stdout).toContain('outcome: done (final_answer)');
    expect(json.code, json.stderr).toBe(0);
    const steps = JSON.parse(json.stdout) as { traceId: string; iterations: { messages: unknown[]; tool: { tool: string; result: { ok: boolean } } | null }[] };
    expect(steps.traceId).toBe(traceId);
    expect(steps.iterations.map((it) => [it.messages.length, it.tool?.tool ?? null, it.tool?.result.ok ?? null])).toEqual([
      [1, 'lookup_order', true],
      [3, 'track_shipment', true],
      [5, null, null],
    ]);
  }, 60_000);
});
