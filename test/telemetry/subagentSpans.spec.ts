import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startActorWorker } from '../../src/nats/cluster/actorWorker.js';
import { startCoreWorker } from '../../src/nats/cluster/coreWorker.js';
import { idempotentToolServer } from '../../src/nats/cluster/idempotentTools.js';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { flowsToHost } from '../../src/nats/cluster/subagentFlows.js';
import { subagentPrefix } from '../../src/nats/cluster/clusterSubagents.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { openJetStreamEventStore } from '../../src/nats/jetstream/jetstreamEventStore.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { formatTraceparent, otelTraceIdOf, rootSpanIdOf } from '../../src/telemetry/traceContext.js';
import { REPO_ROOT } from '../support/cli.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { removePrefix } from '../distributed/clusterSupport.js';
import { enableMemoryOtel, onlySpan, type MemoryOtel } from './otelSupport.js';

// A subagent's run is part of its caller's trace: the examples/subagents desk calls its researcher,
// embedded (one process, the child's log beside the parent's) and on a cluster (the child run on
// the core workers of the researcher's prefix, started by the desk's tool worker over NATS).

const FLOW = path.join(REPO_ROOT, 'examples', 'subagents', 'flow.json');

let otel: MemoryOtel | undefined;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-otel-subagents-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  await otel?.shutdown();
  otel = undefined;
});

const spanId = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const ofRun = (spans: readonly ReadableSpan[], traceId: string) => spans.filter((span) => span.attributes['redflow.trace_id'] === traceId);

/**
 * What both modes must show: one trace, the desk's; the researcher's run span below the desk's
 * `execute_tool researcher` span, its own calls below it; and the call's context in the child's log.
 */
function expectOneTrace(spans: readonly ReadableSpan[], traceId: string, childStarted: AgentEvent | undefined): void {
  const childTraceId = `${traceId}-1`;
  expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([otelTraceIdOf(traceId)]));
  const desk = onlySpan(ofRun(spans, traceId), 'invoke_agent subagents');
  expect(parentOf(desk)).toBe(rootSpanIdOf(traceId));
  const call = onlySpan(spans, 'execute_tool researcher');
  expect(parentOf(call)).toBe(spanId(desk));

  const child = ofRun(spans, childTraceId);
  const researcher = onlySpan(child, 'invoke_agent subagents-researcher');
  expect(parentOf(researcher)).toBe(spanId(call));
  expect(researcher.attributes).toMatchObject({ 'redflow.parent.trace_id': traceId, 'redflow.outcome.status': 'done' });
  expect(child.filter((span) => span !== researcher).map((span) => [span.name, parentOf(span)])).toEqual(
    expect.arrayContaining([
      ['chat', spanId(researcher)],
      ['execute_tool lookup_order', spanId(researcher)],
    ]),
  );
  // The log keeps the call's context: a stretch of the child resumed anywhere finds its place.
  expect(childStarted?.type === 'run.started' && childStarted.data.parent?.traceparent).toBe(formatTraceparent(call.spanContext()));
}

describe('telemetry of subagents', () => {
  it("should put an embedded subagent's run in its caller's trace, below the call's execute_tool span", async () => {
    otel = await enableMemoryOtel();
    const run = await runFlowFile({ flowPath: FLOW, input: 'Where is my order A-1001?', traceId: 'otel-desk-1', logPath: path.join(dir, 'otel-desk-1.jsonl'), fsync: 'never' });
    expect((await run.finished()).outcome.status).toBe('done');
    const child = await readJsonlLog(path.join(dir, 'otel-desk-1-1.jsonl'));
    expectOneTrace(otel.spans(), 'otel-desk-1', child.events[0]);
  });

  describe('on a cluster', () => {
    let nc: NatsConnection;
    const closers: (() => Promise<void>)[] = [];
    const prefixes: string[] = [];

    beforeAll(async () => {
      nc = await connectTestServer('otel-subagents');
    });
    afterAll(async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
      for (const prefix of prefixes) await removePrefix(nc, prefix);
      await nc.drain();
    });

    it("should put the subagent's run, started by a tool worker on its own core workers, in its caller's trace", async () => {
      otel = await enableMemoryOtel();
      const prefix = uniquePrefix();
      for (const hosted of await flowsToHost(FLOW, prefix, [])) {
        prefixes.push(hosted.prefix);
        const serveTool = await idempotentToolServer(nc, hosted.prefix);
        const actors = await startActorWorker({ nc, flowPath: hosted.flowPath, prefix: hosted.prefix, roles: ['model', 'tool'], allowFiles: hosted.allowFiles, serveTool });
        const core = await startCoreWorker({ nc, flowPath: hosted.flowPath, prefix: hosted.prefix, allowFiles: hosted.allowFiles, leaseMs: 1000 });
        closers.push(() => core.close(), () => actors.close());
      }
      const traceId = `otel-desk-${Date.now().toString(36)}`;
      const run = await startRemoteRun({ nc, prefix, input: 'Where is my order A-1001?', traceId });
      expect((await run.result).outcome.status).toBe('done');
      const store = await openJetStreamEventStore(nc, { prefix: subagentPrefix(prefix, 'researcher') });
      const child = await store.read(`${traceId}-1`);
      await store.close();
      expectOneTrace(otel.spans(), traceId, child.events[0]);
    }, 60_000);
  });
});
