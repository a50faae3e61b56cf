import { SpanKind, trace } from '@opentelemetry/api';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { activeTelemetry } from '../../src/telemetry/activeTelemetry.js';
import { disableTelemetry, enableTelemetry } from '../../src/telemetry/enableTelemetry.js';
import { otelTraceIdOf, rootSpanIdOf } from '../../src/telemetry/traceContext.js';
import { eventually } from '../nats/natsSupport.js';
import { helper, loadFlow, nextMessage, withUserDir } from '../node-red/nodeRedHarness.js';
import { onlySpan } from './otelSupport.js';

// A Node-RED agent with REDFLOW_OTEL=1 in Node-RED's environment and an OpenTelemetry SDK
// registered in the process (what `NODE_OPTIONS="--import setup.mjs"` does): its runs are traced
// like any other, the model's and the flow tool's calls (answered through Node-RED messages)
// below the run's span.

const INPUT = 'say hi (node-red-input-4G)';
const echoSchema = { type: 'object', required: ['text'], properties: { text: { type: 'string' } } };
const flow: NodeRedNodeConfig[] = [
  { id: 'agent', type: 'redflow-agent', name: 'Support agent', strategy: 'react', maxIterations: 5, wires: [['answer'], ['model'], ['echo'], []] },
  {
    id: 'model',
    type: 'redflow-model',
    provider: 'scripted',
    answers: [
      { action: 'tool', tool: 'echo', input: { text: 'tool-input-words-8J' }, confidence: 0.5 },
      { action: 'final', message: 'the echo said hi (final-words-1C)', confidence: 0.9 },
    ],
    wires: [],
  },
  { id: 'echo', type: 'redflow-tool-in', name: 'echo', description: 'returns its input', inputSchema: echoSchema, wires: [['echo-out']] },
  { id: 'echo-out', type: 'redflow-tool-out', wires: [] },
  { id: 'answer', type: 'helper' },
];

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('telemetry of a Node-RED agent', () => {
  let exporter: InMemorySpanExporter;
  let provider: BasicTracerProvider;
  let remove: () => Promise<void>;
  let userDir: string;

  beforeEach(async () => {
    ({ userDir, remove } = await withUserDir());
    exporter = new InMemorySpanExporter();
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    process.env.REDFLOW_OTEL = '1';
  });
  afterEach(async () => {
    await helper.unload();
    await remove();
    delete process.env.REDFLOW_OTEL;
    disableTelemetry();
    trace.disable();
    await provider.shutdown();
  });

  it('should turn telemetry on from REDFLOW_OTEL and trace each run: invoke_agent, its chat and execute_tool spans below it', async () => {
    await loadFlow(userDir, flow);
    // Node-RED awaits the node module, which settles once telemetry is on; the helper does not.
    await eventually(() => activeTelemetry() !== undefined, 5000);
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: INPUT });
    const { redflow } = (await answered) as { redflow: { traceId: string } };

    await eventually(() => exporter.getFinishedSpans().some((span) => span.name.startsWith('invoke_agent')), 5000);
    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([otelTraceIdOf(redflow.traceId)]));
    const invoke = onlySpan(spans, 'invoke_agent agent');
    expect(parentOf(invoke)).toBe(rootSpanIdOf(redflow.traceId));
    expect(invoke.attributes).toMatchObject({ 'gen_ai.agent.name': 'agent', 'redflow.outcome.status': 'done' });
    const chats = spans.filter((span) => span.name === 'chat');
    expect(chats.map((span) => [span.kind, span.attributes['gen_ai.provider.name'], parentOf(span)])).toEqual([
      [SpanKind.CLIENT, 'scripted', invoke.spanContext().spanId],
      [SpanKind.CLIENT, 'scripted', invoke.spanContext().spanId],
    ]);
    // The flow tool's call crossed Node-RED's wires with its traceparent.
    const echo = onlySpan(spans, 'execute_tool echo');
    expect(parentOf(echo)).toBe(invoke.spanContext().spanId);
    expect(echo.attributes).toMatchObject({ 'redflow.tool.ok': true, 'gen_ai.tool.call.id': `${redflow.traceId}:1` });
    const said = JSON.stringify(spans.map((span) => [span.attributes, span.events, span.status]));
    for (const content of ['node-red-input-4G', 'tool-input-words-8J', 'final-words-1C']) expect(said, content).not.toContain(content);
  });

  it('should hand the spans the SDK still holds to its exporter when Node-RED closes the agent', async () => {
    // A batch processor that would wait a minute: only a flush exports before then.
    const batched = new InMemorySpanExporter();
    await provider.shutdown();
    provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(batched, { scheduledDelayMillis: 60_000 })] });
    trace.disable();
    trace.setGlobalTracerProvider(provider);
    // Node-RED's module turns telemetry on once per process (the test above did); on again here.
    await enableTelemetry();
    await loadFlow(userDir, flow);
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: INPUT });
    await answered;
    expect(batched.getFinishedSpans()).toEqual([]);

    await helper.unload();
    expect(batched.getFinishedSpans().map((span) => span.name)).toContain('invoke_agent agent');
  });
});
