import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRemoteRun } from '../../src/nats/cluster/remoteRun.js';
import { otelTraceIdOf, rootSpanIdOf } from '../../src/telemetry/traceContext.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { NATS_URL, connectTestServer, eventually, uniquePrefix } from '../nats/natsSupport.js';
import { removePrefix } from '../distributed/clusterSupport.js';
import { killAll, startRedflow, type RedflowProcess } from '../distributed/workerProcess.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlpReceiver.js';

// A distributed run read back as one trace: real `redflow worker` processes (core, model, tool)
// with REDFLOW_OTEL=1 and the OpenTelemetry SDK of deploy/otel/setup.mjs (loaded with --import, as
// the README says), exporting over OTLP/HTTP in JSON to a local receiver. The model is a local
// server speaking Chat Completions; the tool is the openai-agent example's calculator module.

const FLOW = path.join(REPO_ROOT, 'examples', 'openai-agent', 'flow.json');
const SETUP = pathToFileURL(path.join(REPO_ROOT, 'deploy', 'otel', 'setup.mjs')).href;
const LEASE_MS = 1000;
const prefix = uniquePrefix();
const cluster = ['--nats', NATS_URL, '--prefix', prefix, '--lease', String(LEASE_MS)];
const processes: RedflowProcess[] = [];
let nc: NatsConnection;
let model: FakeChatServer;
let receiver: OtlpReceiver;
let dir: string;

/** A `redflow worker` with telemetry on, exporting as `service`. */
function worker(role: string, service: string, env: Record<string, string> = {}): RedflowProcess {
  const started = startRedflow(['worker', FLOW, '--role', role, ...cluster], {
    REDFLOW_OTEL: '1',
    NODE_OPTIONS: `--import ${SETUP}`,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_SERVICE_NAME: service,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    ...env,
  });
  processes.push(started);
  return started;
}

const modelWorker = () => worker('model', 'redflow-model', { OPENAI_BASE_URL: model.baseUrl, REDFLOW_MODEL: 'test-model', OPENAI_API_KEY: 'sk-test-otel-0a1b2c3d' });

const toolCall = { kind: 'completion', content: JSON.stringify({ action: 'tool', tool: 'calculator', input: { operation: 'multiply', a: 12.5, b: 8 }, confidence: 0.8 }), usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 }, finishReason: 'stop' } as const;
const finalAnswer = { kind: 'completion', content: JSON.stringify({ action: 'final', message: '12.5 * 8 = 100', confidence: 0.95 }), usage: { prompt_tokens: 60, completion_tokens: 7, total_tokens: 67 }, finishReason: 'stop' } as const;

/** The spans of run `traceId` received so far. */
const spansOf = (traceId: string): ReceivedSpan[] => receiver.spans.filter((span) => span.attributes['redflow.trace_id'] === traceId);
const named = (spans: readonly ReceivedSpan[], prefixOfName: string) => spans.filter((span) => span.name.startsWith(prefixOfName));

beforeAll(async () => {
  nc = await connectTestServer('otel-trace');
  model = await startFakeChatCompletionsServer();
  model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  receiver = await startOtlpReceiver();
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-otel-'));
});

afterAll(async () => {
  await killAll(processes);
  await removePrefix(nc, prefix);
  await nc.drain();
  await model.stop();
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});

describe('telemetry of a distributed run', () => {
  it('should export the spans of the core, model and tool workers as one trace, and their metrics', async () => {
    const core = worker('core', 'redflow-core');
    const tools = worker('tool', 'redflow-tool');
    const llm = modelWorker();
    await Promise.all([core.ready(), tools.ready(), llm.ready()]);
    model.enqueue(toolCall, finalAnswer);

    const run = await runCli(['run', FLOW, ...cluster.slice(0, 4), '--input', 'what is 12.5 * 8?', '--json'], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const { traceId } = JSON.parse(run.stdout) as { traceId: string };
    await eventually(() => spansOf(traceId).length >= 4, 15_000);

    const spans = spansOf(traceId);
    expect(receiver.refused).toEqual([]);
    expect(spans.map((span) => [span.service, span.name]).sort()).toEqual([
      ['redflow-core', 'invoke_agent openai-agent'],
      ['redflow-model', 'chat test-model'],
      ['redflow-model', 'chat test-model'],
      ['redflow-tool', 'execute_tool calculator'],
    ]);
    // One trace, the one the run's trace id names, whichever process recorded the span.
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([otelTraceIdOf(traceId)]));
    const [invoke] = named(spans, 'invoke_agent') as [ReceivedSpan];
    expect(invoke.parentSpanId).toBe(rootSpanIdOf(traceId));
    expect(invoke.attributes).toMatchObject({ 'redflow.outcome.status': 'done', 'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.output_tokens': 16 });
    // The model and tool workers' spans are children of the core's run span: traceparent crossed NATS.
    for (const span of [...named(spans, 'chat'), ...named(spans, 'execute_tool')]) expect(span.parentSpanId, span.name).toBe(invoke.spanId);
    const chats = named(spans, 'chat').sort((a, b) => Number(a.attributes['redflow.iteration']) - Number(b.attributes['redflow.iteration']));
    expect(chats.map((chat) => chat.attributes)).toEqual([
      expect.objectContaining({ 'gen_ai.request.model': 'test-model', 'gen_ai.provider.name': 'openai', 'gen_ai.usage.input_tokens': 40, 'gen_ai.usage.output_tokens': 9, 'gen_ai.response.finish_reasons': ['stop'] }),
      expect.objectContaining({ 'gen_ai.request.model': 'test-model', 'gen_ai.usage.input_tokens': 60, 'gen_ai.usage.output_tokens': 7 }),
    ]);
    expect(chats.map((chat) => chat.kind)).toEqual([3, 3]);
    expect(named(spans, 'execute_tool')[0]?.attributes).toMatchObject({ 'gen_ai.tool.name': 'calculator', 'gen_ai.tool.call.id': `${traceId}:1`, 'redflow.tool.ok': true });
    // No content by default: not the question, not the answers, not the tool's input or output.
    expect(JSON.stringify(spans)).not.toMatch(/12\.5|what is|result/);

    // Each worker flushes its metrics as it shuts down (SIGTERM).
    for (const each of [core, tools, llm]) each.child.kill('SIGTERM');
    await Promise.all([core.ended, tools.ended, llm.ended]);
    const sum = (service: string, metric: string) =>
      receiver.points.filter((point) => point.service === service && point.metric === metric).reduce((total, point) => total + point.value, 0);
    expect(sum('redflow-core', 'redflow.runs.started')).toBe(1);
    expect(receiver.points.filter((point) => point.metric === 'redflow.runs.ended').map((point) => point.attributes)).toEqual([
      { 'gen_ai.agent.name': 'openai-agent', 'redflow.outcome.status': 'done', 'redflow.outcome.reason': 'final_answer' },
    ]);
    expect(sum('redflow-core', 'redflow.iterations')).toBe(2);
    expect(sum('redflow-model', 'gen_ai.client.token.usage')).toBe(4);
    expect(sum('redflow-model', 'gen_ai.client.operation.duration')).toBe(2);
    expect(sum('redflow-tool', 'redflow.tool.duration')).toBe(1);
  }, 60_000);

  it('should keep a run taken over after its core worker was killed in the same trace', async () => {
    const tools = worker('tool', 'redflow-tool');
    const llm = modelWorker();
    // The doomed core worker kills itself (SIGKILL) once the run's tool call is in the log.
    const doomed = worker('core', 'redflow-core-a', { REDFLOW_CRASH_AFTER_EVENT: '4' });
    await Promise.all([tools.ready(), llm.ready(), doomed.ready()]);
    model.enqueue(toolCall, finalAnswer);
    const run = await startRemoteRun({ nc, prefix, input: 'what is 12.5 * 8?', traceId: `otel-takeover-${Date.now().toString(36)}` });
    expect((await doomed.ended).signal).toBe('SIGKILL');
    const heir = worker('core', 'redflow-core-b');
    await heir.ready();
    const { outcome } = await run.result;
    expect(outcome.status).toBe('done');
    await eventually(() => named(spansOf(run.traceId), 'invoke_agent').length === 1 && named(spansOf(run.traceId), 'chat').length === 2, 15_000);

    const spans = spansOf(run.traceId);
    // The killed worker's run span is lost with it; its model call and the heir's stretch are in the run's trace.
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([otelTraceIdOf(run.traceId)]));
    const [stretch] = named(spans, 'invoke_agent') as [ReceivedSpan];
    expect(stretch).toMatchObject({ service: 'redflow-core-b', parentSpanId: rootSpanIdOf(run.traceId), attributes: expect.objectContaining({ 'redflow.resumed': true }) });
    const [first, second] = named(spans, 'chat').sort((a, b) => Number(a.attributes['redflow.iteration']) - Number(b.attributes['redflow.iteration'])) as [ReceivedSpan, ReceivedSpan];
    expect(first.parentSpanId).not.toBe(stretch.spanId);
    expect(second.parentSpanId).toBe(stretch.spanId);
  }, 60_000);
});
