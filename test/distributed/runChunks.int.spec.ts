import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isToolUpdate, type RunChunk } from '../../src/runtime/serveActors.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { startActorWorker, type ActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker, type CoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { followRunChunks } from '../../src/nats/cluster/runChunks.js';
import { randomIds } from '../../src/runtime/ids.js';
import { createNatsRunBackend } from '../../src/nats/serve/natsRunBackend.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { ROOT, removePrefix } from './clusterSupport.js';
import { answerTextOf } from '../support/answerTextOf.js';

// On a cluster, the model worker publishes the pieces of each answer on
// <prefix>.runs.chunk.<traceId> as it writes them: a client follows them live, and the trace
// stream (the log) never holds them.

const flowPath = path.join(ROOT, 'test/fixtures/cluster/flow.json');
const prefix = uniquePrefix();
let clientNc: NatsConnection;
let workerNc: NatsConnection;
let actors: ActorWorker;
let core: CoreWorker;

beforeAll(async () => {
  clientNc = await connectTestServer('client');
  workerNc = await connectTestServer('workers');
  actors = await startActorWorker({ nc: workerNc, flowPath, prefix, roles: ['model', 'tool', 'memory'] });
  core = await startCoreWorker({ nc: workerNc, flowPath, prefix, owner: 'core-chunks' });
});

afterAll(async () => {
  await core.close();
  await actors.close();
  await removePrefix(clientNc, prefix);
  await workerNc.drain();
  await clientNc.drain();
});

describe("a cluster run's answers, live", () => {
  it('should reach a client piece by piece on the chunk subject, adding up to the answers the log holds, which holds no piece', async () => {
    const traceId = randomIds.traceId();
    const chunks: RunChunk[] = [];
    const stop = followRunChunks(clientNc, prefix, traceId, (chunk) => void (isToolUpdate(chunk) || chunks.push(chunk)));
    // Garbage on the subject is dropped, not handed on.
    clientNc.publish(`${prefix}.runs.chunk.${traceId}`, new TextEncoder().encode('not json'));
    await clientNc.flush();
    const run = await startRemoteRun({ nc: clientNc, prefix, input: 'go', traceId });
    await run.result;
    await clientNc.flush();
    stop();
    const { events } = await (await openJetStreamEventStore(clientNc, { prefix })).read(traceId);
    const answers = events.flatMap((e) => (e.type === 'model.answered' ? [[e.iteration, e.data.text] as const] : []));
    expect(answers.length).toBeGreaterThan(1);
    // Each answer's pieces are its text for people: the final answer's message, nothing of a tool call.
    for (const [iteration, text] of answers) expect(chunks.filter((c) => c.iteration === iteration).map((c) => c.text).join('')).toBe(answerTextOf(text));
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.traceId === traceId && c.attempt === 1)).toBe(true);
    // The log is the trace stream's messages of the run: events only.
    expect(events.every((e) => !('text' in e && 'attempt' in e))).toBe(true);
  });

  it("should reach the run stream of redflow serve --nats (the backend's followChunks)", async () => {
    const backend = await createNatsRunBackend({ nc: clientNc, prefix, flowsDir: path.dirname(flowPath) });
    const traceId = randomIds.traceId();
    const chunks: RunChunk[] = [];
    const stop = backend.followChunks?.(traceId, (chunk) => void (isToolUpdate(chunk) || chunks.push(chunk)));
    const run = await startRemoteRun({ nc: clientNc, prefix, input: 'go', traceId });
    const { envelope } = await run.result;
    await clientNc.flush();
    stop?.();
    // Only the final answer has text for people: its message comes, under the last iteration.
    expect(chunks.length).toBeGreaterThan(0);
    expect(new Set(chunks.map((c) => c.iteration))).toEqual(new Set([envelope.state.iteration]));
    expect(chunks.map((c) => c.text).join('')).toBe(envelope.observability.outcome?.answer);
    await backend.close();
  });
});
