import type { ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { requestRunAbort } from '../../src/nats/cluster/runAborts.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, startWorkerProcess, stopCluster } from './clusterSupport.js';
import { readEffects, waitForEffects } from './effectLog.js';

// Aborting a run on a cluster stops the tool call under way in the tool worker: its
// `context.signal` fires and the effect it was about to have never happens. Real `redflow worker`
// processes (core and model in one, the tool in another) on the shared nats-server.

const flowPath = path.join(ROOT, 'test/fixtures/liveness/flow.json');
/** When the tool would have its effect, after it starts: far beyond the bound below. */
const EFFECT_DELAY_MS = 6000;
/** How soon after the abort the tool's signal must fire, loaded machine included. */
const CANCEL_BOUND_MS = 3000;

const prefix = uniquePrefix();
const workers: ChildProcess[] = [];
let nc: NatsConnection;
let dir: string;
let effectLog: string;

beforeAll(async () => {
  nc = await connectTestServer('cancel-tool-call');
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-cancel-'));
  effectLog = path.join(dir, 'effects.log');
  const env = { EFFECT_LOG: effectLog, EFFECT_DELAY_MS: String(EFFECT_DELAY_MS) };
  workers.push(await startWorkerProcess(flowPath, 'core,model', { prefix }));
  workers.push(await startWorkerProcess(flowPath, 'tool', { prefix, env }));
});

afterAll(() => stopCluster({ workers, nc, prefix, dir }));

describe('aborting a run whose tool call is under way in a tool worker', () => {
  it("should fire the tool's signal in the tool worker, so its effect never happens", async () => {
    const live: AgentEvent[] = [];
    const run = await startRemoteRun({ nc, prefix, input: 'go', onEvent: (event) => live.push(event) });
    const [started] = await waitForEffects(effectLog, (steps) => steps.some((step) => step.what === 'started'), 10_000);
    const startedAt = Date.now();
    expect(started?.key).toBe(`${run.traceId}:1`);

    const abortedAt = Date.now();
    await expect(requestRunAbort(nc, prefix, run.traceId, { reason: 'no longer needed' })).resolves.toMatchObject({ kind: 'aborting' });
    const steps = await waitForEffects(effectLog, (all) => all.some((step) => step.what === 'aborted'), CANCEL_BOUND_MS);
    const cancelMs = Date.now() - abortedAt;
    expect(steps.filter((step) => step.what === 'aborted').map((step) => step.key)).toEqual([`${run.traceId}:1`]);
    expect((await run.result).outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });

    // Past the moment the tool would have had its effect: nothing came.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + EFFECT_DELAY_MS + 500 - Date.now())));
    expect((await readEffects(effectLog)).filter((step) => step.what === 'effect')).toEqual([]);
    expect(live.at(-1)?.type).toBe('run.failed');
    console.log(`tool signal fired ${cancelMs} ms after the abort request`);
  }, 30_000);
});
