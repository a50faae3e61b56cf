import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { createSharedRunFollow } from '../../src/nats/jetstream/sharedRunFollow.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, exited, removePrefix, startWorkerProcess } from './clusterSupport.js';

// Concurrent runs (200; REDFLOW_LOAD_RUNS changes it) through one nats-server, 2 core worker
// processes and 2 model+tool worker processes (npm test builds dist/ first). Every run must
// complete, and every log must replay with no event lost or duplicated. 200 runs at once already
// keep both core workers busy with interleaved runs; the 1,000-run measurement is a benchmark,
// bench/load.mjs (npm run bench), which checks the same on its runs.
const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
const RUNS = Number(process.env.REDFLOW_LOAD_RUNS ?? 200);

let nc: NatsConnection;
const workers: ChildProcess[] = [];

async function worker(roles: string): Promise<ChildProcess> {
  const child = await startWorkerProcess(flowPath, roles, { prefix, env: { SLOW_BUMP_MS: '0' } });
  workers.push(child);
  return child;
}

beforeAll(async () => {
  nc = await connectTestServer('load-client');
  await Promise.all([worker('core'), worker('core'), worker('model,tool'), worker('model,tool')]);
});

afterAll(async () => {
  for (const child of workers) child.kill('SIGTERM');
  await Promise.all(workers.map(exited));
  await removePrefix(nc, prefix);
  await nc.drain();
});

describe('distributed mode under load', () => {
  it(`should complete ${RUNS} concurrent runs with no event lost or duplicated`, async () => {
    const started = performance.now();
    const runs = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => startRemoteRun({ nc, prefix, input: `run ${i}`, traceId: `load-${i}`, startTimeoutMs: 60_000 })),
    );
    const results = await Promise.all(runs.map((run) => run.result));
    const seconds = (performance.now() - started) / 1000;
    expect(results.every((result) => result.outcome.reason === 'final_answer')).toBe(true);

    const store = await openJetStreamEventStore(nc, { prefix });
    const latencies: number[] = [];
    let events = 0;
    for (const run of runs) {
      const log = await store.read(run.traceId);
      expect(log.problems, run.traceId).toEqual([]);
      expect(new Set(log.events.map((e) => e.id)).size).toBe(log.events.length);
      expect(log.events.map((e) => e.type)).toEqual([
        'run.started',
        ...Array.from({ length: 3 }, () => ['model.requested', 'model.answered', 'tool.requested', 'tool.completed']).flat(),
        'model.requested',
        'model.answered',
        'run.completed',
      ]);
      events += log.events.length;
      const starts = log.events.filter((e) => e.type === 'model.requested').map((e) => Date.parse(e.time));
      const end = Date.parse(log.events.at(-1)?.time ?? '');
      starts.forEach((at, i) => latencies.push((starts[i + 1] ?? end) - at));
    }
    latencies.sort((a, b) => a - b);
    const iterations = latencies.length;
    const quantile = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    console.log(
      `${RUNS} runs, ${iterations} iterations, ${events} events in ${seconds.toFixed(1)} s: ` +
        `${(iterations / seconds).toFixed(0)} iterations/s; iteration latency p50 ${quantile(0.5)} ms, p99 ${quantile(0.99)} ms`,
    );
    expect(events).toBe(RUNS * 16);
  }, 300_000);

  it(`should complete ${RUNS} concurrent runs followed through one shared consumer, each client seeing exactly its run's stored log`, async () => {
    const follow = createSharedRunFollow({ nc, prefix });
    const seen = new Map<string, AgentEvent[]>();
    const runs = await Promise.all(
      Array.from({ length: RUNS }, (_, i) => {
        const traceId = `shared-${i}`;
        seen.set(traceId, []);
        return startRemoteRun({ nc, prefix, input: `run ${i}`, traceId, startTimeoutMs: 60_000, follow, onEvent: (event) => seen.get(traceId)?.push(event) });
      }),
    );
    const results = await Promise.all(runs.map((run) => run.result));
    await follow.close();
    expect(results.every((result) => result.outcome.reason === 'final_answer')).toBe(true);
    const store = await openJetStreamEventStore(nc, { prefix });
    for (const run of runs) {
      const log = await store.read(run.traceId);
      expect(log.problems, run.traceId).toEqual([]);
      expect(log.events).toHaveLength(16);
      expect(seen.get(run.traceId), run.traceId).toEqual(log.events);
    }
  }, 300_000);
});
