import { SpanKind, SpanStatusCode, context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiChatModel } from '../../src/actors/models/openAiChatModel.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { resumeRun, startRun } from '../../src/runtime/runAgent.js';
import type { RunResult } from '../../src/runtime/runSession.js';
import { isRunWaiting } from '../../src/runtime/runWaitingError.js';
import { registerSecret } from '../../src/secrets/secrets.js';
import { disableTelemetry, enableTelemetry } from '../../src/telemetry/enableTelemetry.js';
import { TelemetryMetric } from '../../src/telemetry/names.js';
import { otelTraceIdOf, rootSpanIdOf } from '../../src/telemetry/traceContext.js';
import { startFakeChatCompletionsServer, stopFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { enableMemoryOtel, onlySpan, pointsOf, type MemoryOtel } from './otelSupport.js';

// Embedded runs with telemetry on, their spans and metrics read from the SDK's in-memory
// exporters. The model is the OpenAI provider against a local server speaking Chat Completions.

const INPUT = 'Where is order A-1001? (input-words-7Q)';
const TOOL_TEXT = 'tool-argument-words-3Z';
const FINAL = 'final-answer-words-9K';
const SECRET = 'sk-live-telemetry-5e0d7c1a9b';

let server: FakeChatServer;
let otel: MemoryOtel | undefined;

beforeAll(async () => {
  server = await startFakeChatCompletionsServer();
  registerSecret(SECRET);
});
afterAll(() => stopFakeChatCompletionsServer(server));
beforeEach(() => server.reset());
afterEach(async () => {
  await otel?.shutdown();
  otel = undefined;
});

const broken: ToolDefinition = {
  name: 'broken',
  description: 'always fails',
  inputSchema: { type: 'object' },
  execute: () => {
    throw new Error('the backend is down (tool-output-words-4R)');
  },
};

/** Queues the model's answers: each a completion with its own usage. */
function script(...answers: unknown[]): void {
  answers.forEach((value, index) =>
    server.enqueue({ kind: 'completion', content: JSON.stringify(value), usage: { prompt_tokens: 10 + index, completion_tokens: 5, total_tokens: 15 + index }, finishReason: 'stop' }),
  );
}

/** Runs `input` in embedded mode with the echo and broken tools. */
async function run(traceId: string, input = INPUT, agent = agentConfig({ allowedTools: ['echo', 'broken'] })) {
  const actors = serveActors({
    model: createOpenAiChatModel({ baseUrl: server.baseUrl, model: 'gpt-test', timeoutMs: 5000, maxRetries: 0 }),
    tools: [countingTool('echo', () => ({ said: 'tool-output-words-8P' })).tool, broken],
  });
  const store = createMemoryEventStore();
  try {
    const handle = startRun({ ...actors, agent, store, input, traceId, flow: { id: 'order-status' } });
    const settled: { result?: RunResult; error?: unknown } = await handle.result.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    const { events } = await store.read(traceId);
    return { ...settled, events: [...events], actors, store };
  } finally {
    await actors.close();
  }
}

const spanId = (span: ReadableSpan) => span.spanContext().spanId;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
/** Everything a span says: its attributes and its events' names and attributes. */
const said = (spans: readonly ReadableSpan[]) => JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events.map((event) => [event.name, event.attributes]), span.status]));

describe('telemetry of an embedded run', () => {
  it('should make one trace: invoke_agent, with a chat span per model call and an execute_tool span per tool call as its children', async () => {
    otel = await enableMemoryOtel();
    script(answer.tool('echo', { text: TOOL_TEXT }), answer.tool('broken', {}), answer.final(FINAL));
    const { result, events } = await run('otel-run-1');
    expect(result?.outcome.status).toBe('done');

    const spans = otel.spans();
    const invoke = onlySpan(spans, 'invoke_agent order-status');
    const traceId = otelTraceIdOf('otel-run-1');
    expect(spans.map((span) => span.spanContext().traceId)).toEqual(spans.map(() => traceId));
    expect(parentOf(invoke)).toBe(rootSpanIdOf('otel-run-1'));
    expect(invoke.kind).toBe(SpanKind.INTERNAL);
    expect(invoke.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'order-status',
      'redflow.trace_id': 'otel-run-1',
      'redflow.resumed': false,
      'redflow.outcome.status': 'done',
      'redflow.outcome.reason': 'final_answer',
      'gen_ai.usage.input_tokens': 10 + 11 + 12,
      'gen_ai.usage.output_tokens': 15,
    });
    expect(invoke.status.code).toBe(SpanStatusCode.UNSET);
    // The span's events are the log's, in order, with their seq.
    expect(invoke.events.map((event) => [event.name, event.attributes?.['redflow.seq']])).toEqual(events.map((event) => [event.type, event.seq]));

    const chats = spans.filter((span) => span.name === 'chat gpt-test');
    expect(chats).toHaveLength(3);
    for (const [index, chat] of chats.entries()) {
      expect(parentOf(chat)).toBe(spanId(invoke));
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.usage.input_tokens': 10 + index,
        'gen_ai.usage.output_tokens': 5,
        'gen_ai.response.finish_reasons': ['stop'],
        'redflow.iteration': index + 1,
        'redflow.trace_id': 'otel-run-1',
      });
    }

    const echo = onlySpan(spans, 'execute_tool echo');
    expect(parentOf(echo)).toBe(spanId(invoke));
    expect(echo.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'gen_ai.tool.call.id': 'otel-run-1:1',
      'redflow.tool.ok': true,
    });
    expect(echo.status.code).toBe(SpanStatusCode.UNSET);
    const failed = onlySpan(spans, 'execute_tool broken');
    expect(parentOf(failed)).toBe(spanId(invoke));
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes).toMatchObject({ 'error.type': 'TOOL_FAILED', 'redflow.tool.ok': false });
    expect(failed.events.map((event) => event.attributes?.['exception.type'])).toContain('TOOL_FAILED');
  });

  it('should put no prompt, answer, tool input, tool output or error message on a span unless content capture is on', async () => {
    otel = await enableMemoryOtel();
    script(answer.tool('echo', { text: TOOL_TEXT }), answer.tool('broken', {}), answer.final(FINAL));
    const { events } = await run('otel-run-2');
    const prompt = events.find((event) => event.type === 'model.requested')?.data as { prompt: string };
    const text = said(otel.spans());
    expect(text).toContain('chat gpt-test');
    for (const content of ['input-words-7Q', TOOL_TEXT, 'tool-output-words-8P', 'tool-output-words-4R', FINAL, 'backend is down', prompt.prompt.slice(0, 60)]) {
      expect(text, content).not.toContain(content);
    }
  });

  it('should record the messages, answers and tool calls when content capture is on, redacted of secrets', async () => {
    otel = await enableMemoryOtel({ captureContent: true });
    script(answer.tool('echo', { text: `${TOOL_TEXT} ${SECRET}` }), answer.tool('broken', {}), answer.final(FINAL));
    await run('otel-run-3', `${INPUT} key ${SECRET}`);
    const spans = otel.spans();
    const [first] = spans.filter((span) => span.name === 'chat gpt-test');
    const sent = JSON.parse(String(first?.attributes['gen_ai.input.messages'])) as { role: string; parts: { type: string; content: string }[] }[];
    expect(sent.map((message) => message.role)).toEqual(['system', 'user']);
    expect(sent[1]?.parts[0]?.content).toContain('input-words-7Q');
    expect(String(first?.attributes['gen_ai.output.messages'])).toContain(TOOL_TEXT);
    const echo = onlySpan(spans, 'execute_tool echo');
    expect(JSON.parse(String(echo.attributes['gen_ai.tool.call.arguments']))).toEqual({ text: `${TOOL_TEXT} [redacted]` });
    expect(JSON.parse(String(echo.attributes['gen_ai.tool.call.result']))).toEqual({ said: 'tool-output-words-8P' });
    expect(onlySpan(spans, 'execute_tool broken').status.message).toContain('backend is down');
    expect(said(spans)).not.toContain(SECRET);
  });

  it('should mark the run span and the chat span failed when the model fails', async () => {
    otel = await enableMemoryOtel();
    server.enqueue({ kind: 'error', status: 400, message: 'bad request' });
    const { result } = await run('otel-run-4');
    expect(result?.outcome).toMatchObject({ status: 'blocked', reason: 'model_error' });
    const spans = otel.spans();
    const chat = onlySpan(spans, 'chat gpt-test');
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    expect(chat.attributes['error.type']).toBe('MODEL_REQUEST_REJECTED');
    const invoke = onlySpan(spans, 'invoke_agent order-status');
    expect(invoke.status).toEqual({ code: SpanStatusCode.ERROR, message: 'MODEL_REQUEST_REJECTED' });
    expect(invoke.attributes).toMatchObject({ 'error.type': 'MODEL_REQUEST_REJECTED', 'redflow.outcome.status': 'blocked', 'redflow.outcome.reason': 'model_error' });
  });

  it('should put every stretch of a run in its one trace: a run resumed from its log, and one that parks in a wait', async () => {
    otel = await enableMemoryOtel();
    script(answer.tool('echo', { text: TOOL_TEXT }), answer.final(FINAL));
    const agent = agentConfig({ allowedTools: ['echo', 'broken'], requiresApproval: ['echo'] });
    const parked = await run('otel-run-5', INPUT, agent);
    expect(isRunWaiting(parked.error)).toBe(true);
    const actors = serveActors({
      model: createOpenAiChatModel({ baseUrl: server.baseUrl, model: 'gpt-test', timeoutMs: 5000, maxRetries: 0 }),
      tools: [countingTool('echo').tool],
    });
    try {
      const resumed = resumeRun({ ...actors, agent, store: parked.store, events: parked.events, answer: { kind: 'approval', approved: true } });
      expect((await resumed.result).outcome.status).toBe('done');
    } finally {
      await actors.close();
    }
    const stretches = otel.spans().filter((span) => span.name.startsWith('invoke_agent'));
    expect(stretches.map((span) => [span.attributes['redflow.resumed'], span.attributes['redflow.left']])).toEqual([
      [false, 'waiting'],
      [true, undefined],
    ]);
    // Both below the run's root, in the trace its trace id names.
    for (const span of otel.spans()) expect(span.spanContext().traceId).toBe(otelTraceIdOf('otel-run-5'));
    expect(stretches.map(parentOf)).toEqual([rootSpanIdOf('otel-run-5'), rootSpanIdOf('otel-run-5')]);
    expect(otel.spans().filter((span) => span.name === 'chat gpt-test').map(parentOf)).toEqual(stretches.map(spanId));
  });

  it('should record the run, iteration, token, duration and in-flight metrics', async () => {
    otel = await enableMemoryOtel();
    script(answer.tool('echo', { text: TOOL_TEXT }), answer.tool('broken', {}), answer.final(FINAL));
    await run('otel-run-6');
    const metrics = await otel.metrics();
    const sum = (name: string) => pointsOf(metrics, name).reduce((total, point) => total + (point.value as number), 0);
    expect(sum(TelemetryMetric.RunsStarted)).toBe(1);
    expect(pointsOf(metrics, TelemetryMetric.RunsEnded).map((point) => [point.attributes, point.value])).toEqual([
      [{ 'gen_ai.agent.name': 'order-status', 'redflow.outcome.status': 'done', 'redflow.outcome.reason': 'final_answer' }, 1],
    ]);
    expect(sum(TelemetryMetric.Iterations)).toBe(3);
    expect(sum(TelemetryMetric.RunsActive)).toBe(0);
    const tokens = pointsOf(metrics, TelemetryMetric.TokenUsage).map((point) => [point.attributes['gen_ai.token.type'], (point.value as { count: number; sum: number }).count, (point.value as { sum: number }).sum]);
    expect(tokens).toEqual(expect.arrayContaining([['input', 3, 33], ['output', 3, 15]]));
    expect(pointsOf(metrics, TelemetryMetric.OperationDuration).map((point) => (point.value as { count: number }).count)).toEqual([3]);
    const tools = pointsOf(metrics, TelemetryMetric.ToolDuration).map((point) => [point.attributes['gen_ai.tool.name'], point.attributes['error.type'], (point.value as { count: number }).count]);
    expect(tools).toEqual(expect.arrayContaining([['echo', undefined, 1], ['broken', 'TOOL_FAILED', 1]]));
    expect(pointsOf(metrics, TelemetryMetric.RunDuration).map((point) => (point.value as { count: number }).count)).toEqual([1]);
    // Nothing is being served once the run is over.
    expect(pointsOf(metrics, TelemetryMetric.ActorInFlight).map((point) => point.value)).toEqual([0, 0, 0]);
  });

  it('should link a run started inside a span to it, and make spans started inside a tool call children of its execute_tool span', async () => {
    const contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    try {
      otel = await enableMemoryOtel();
      const { tracerProvider } = otel;
      const nested: ToolDefinition = {
        name: 'echo',
        description: 'does its work in a span of its own',
        inputSchema: { type: 'object' },
        execute: () => {
          tracerProvider.getTracer('the-tool').startSpan('inner work').end();
          return { done: true };
        },
      };
      script(answer.tool('echo', {}), answer.final(FINAL));
      const actors = serveActors({ model: createOpenAiChatModel({ baseUrl: server.baseUrl, model: 'gpt-test', timeoutMs: 5000, maxRetries: 0 }), tools: [nested] });
      const caller = await tracerProvider.getTracer('the-app').startActiveSpan('POST /runs', async (span) => {
        const run = startRun({ ...actors, agent: agentConfig(), store: createMemoryEventStore(), input: INPUT, traceId: 'otel-run-9' });
        await run.result;
        span.end();
        return span.spanContext();
      });
      await actors.close();
      const spans = otel.spans();
      const invoke = onlySpan(spans, 'invoke_agent');
      // The run's trace is its own (derived from its trace id); the caller's span is linked.
      expect(invoke.spanContext().traceId).toBe(otelTraceIdOf('otel-run-9'));
      expect(invoke.links.map((link) => link.context.spanId)).toEqual([caller.spanId]);
      expect(parentOf(onlySpan(spans, 'inner work'))).toBe(spanId(onlySpan(spans, 'execute_tool echo')));
    } finally {
      context.disable();
    }
  });

  it("should place a model call whose request has no traceparent below its run's root", async () => {
    otel = await enableMemoryOtel();
    script(answer.final(FINAL));
    const actors = serveActors({ model: createOpenAiChatModel({ baseUrl: server.baseUrl, model: 'gpt-test', timeoutMs: 5000, maxRetries: 0 }), tools: [] });
    try {
      // A client of its own, not a Redflow core: no trace context in the request.
      const reply = await actors.transport.request(actors.subjects.model, { traceId: 'otel-run-10', iteration: 1, messages: [{ role: 'user', content: 'hi' }] }, { timeoutMs: 5000 });
      expect(reply.ok).toBe(true);
    } finally {
      await actors.close();
    }
    const chat = onlySpan(otel.spans(), 'chat gpt-test');
    expect(chat.spanContext().traceId).toBe(otelTraceIdOf('otel-run-10'));
    expect(parentOf(chat)).toBe(rootSpanIdOf('otel-run-10'));
  });

  it('should sample a run whole or not at all when every process samples by trace id', async () => {
    const exporter = new InMemorySpanExporter();
    const byTraceId = new TraceIdRatioBasedSampler(0.5);
    const tracerProvider = new BasicTracerProvider({
      sampler: new ParentBasedSampler({ root: byTraceId, remoteParentSampled: byTraceId }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await enableTelemetry({ tracerProvider });
    try {
      const traceIds = Array.from({ length: 12 }, (_, index) => `otel-sampled-${index}`);
      for (const traceId of traceIds) {
        script(answer.tool('echo', { text: TOOL_TEXT }), answer.final(FINAL));
        await run(traceId);
      }
      const kept = traceIds.map((traceId) => exporter.getFinishedSpans().filter((span) => span.attributes['redflow.trace_id'] === traceId).length);
      // Each run has all its spans (a run, two model calls, a tool call) or none, and both happen.
      expect(new Set(kept)).toEqual(new Set([0, 4]));
    } finally {
      disableTelemetry();
      await tracerProvider.shutdown();
    }
  });

  it('should record nothing once telemetry is off', async () => {
    otel = await enableMemoryOtel();
    script(answer.final(FINAL));
    await run('otel-run-7');
    expect(otel.spans().length).toBeGreaterThan(0);
    otel.reset();
    disableTelemetry();
    script(answer.final(FINAL));
    const { result } = await run('otel-run-8');
    expect(result?.outcome.status).toBe('done');
    expect(otel.spans()).toEqual([]);
  });
});
