import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsTransport } from '../../src/nats/natsTransport.js';
import { Subject } from '../../src/actors/subjects.js';
import type { ToolResult } from '../../src/actors/tool.js';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { TelemetryMetric } from '../../src/telemetry/names.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { enableMemoryOtel, pointsOf, type MemoryOtel } from './otelSupport.js';

// A tool worker's queue depth as telemetry reports it: the gauge redflow.actor.in_flight counts
// the calls it has taken from its queue group and not answered yet, by tool, read while they run.

const SLEEP = `export default { name: 'sleep', description: 'sleeps', inputSchema: { type: 'object', properties: { ms: { type: 'integer' } } },
  execute: ({ ms }) => new Promise((resolve) => setTimeout(() => resolve({ slept: ms }), ms)) };`;

let dir: string;
let nc: NatsConnection;
let otel: MemoryOtel;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-queue-depth-'));
  await writeFile(path.join(dir, 'sleep.mjs'), SLEEP);
  await writeFile(
    path.join(dir, 'flow.json'),
    JSON.stringify({
      id: 'queue-depth',
      nodes: [
        { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3 } },
        { id: 'llm', type: 'model.llm', config: { provider: 'scripted', answers: [{ action: 'final', message: 'hi', confidence: 0.9 }] } },
        { id: 'sleep', type: 'tool.module', config: { module: 'sleep.mjs' } },
      ],
      edges: [
        { id: 'e1', source: 'agent', target: 'llm' },
        { id: 'e2', source: 'agent', target: 'sleep' },
      ],
    }),
  );
  nc = await connectTestServer('queue-depth');
  otel = await enableMemoryOtel();
});

afterAll(async () => {
  await otel.shutdown();
  await nc.drain();
  await rm(dir, { recursive: true, force: true });
});

describe("a worker's queue depth", () => {
  it('should be the number of calls under way on the worker, by tool, and none once they are answered', async () => {
    const prefix = uniquePrefix();
    const worker = await startActorWorker({ nc, flowPath: path.join(dir, 'flow.json'), prefix, roles: ['tool'] });
    const transport = createNatsTransport(nc);
    const depth = async () =>
      pointsOf(await otel.metrics(), TelemetryMetric.ActorInFlight)
        .filter((point) => point.attributes['gen_ai.tool.name'] === 'sleep')
        .map((point) => [point.attributes['redflow.actor'], point.value]);
    try {
      const calls = Array.from({ length: 3 }, (_, n) =>
        transport.request<unknown, ToolResult>(
          Subject.tool(prefix, 'sleep'),
          { traceId: `qd-${n}`, iteration: 1, tool: 'sleep', input: { ms: 2000 }, idempotencyKey: `qd-${n}:1` },
          { timeoutMs: 10_000 },
        ),
      );
      // All three under way at once (each sleeps 2 s), seen whenever they have all arrived.
      await expect.poll(() => depth(), { timeout: 1800, interval: 20 }).toEqual([['tool', 3]]);
      expect((await Promise.all(calls)).every((reply) => reply.ok && reply.data.ok)).toBe(true);
      expect(await depth()).toEqual([['tool', 0]]);
    } finally {
      await transport.close();
      await worker.close();
    }
  });
});
