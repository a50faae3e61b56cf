import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import type { WaitAnswer } from '../../src/events/pendingWait.js';
import { answerWaitingRun, settleRun } from '../../src/host/answerWaitingRun.js';
import { serveActors } from '../../src/runtime/embeddedActors.js';
import { startRun } from '../../src/runtime/runAgent.js';
import { agentConfig, answer, countingTool } from '../support/harness.js';
import { enableMemoryOtel, type MemoryOtel } from './otelSupport.js';

// What a person, a client, a tool or an aborting caller writes into a run reaches its spans only
// when the operator asks for content (captureContent): every way in, each text marked so that
// a leak anywhere (an attribute, a span event, a status, a link, a metric's attributes) shows.

const MARK = {
  input: 'input-text-Q1',
  question: 'question-text-Q2',
  human: 'human-answer-Q3',
  toolInput: 'tool-input-Q4',
  denial: 'denial-reason-Q5',
  client: 'client-result-Q6',
  toolError: 'tool-error-Q7',
  abort: 'abort-reason-Q8',
  final: 'final-answer-Q9',
} as const;

const broken: ToolDefinition = {
  name: 'broken',
  description: 'fails',
  inputSchema: { type: 'object' },
  execute: () => {
    throw new Error(`the backend said no (${MARK.toolError})`);
  },
};
/** A tool that answers only when its call is aborted: the run is under way until it is. */
const hang: ToolDefinition = {
  name: 'hang',
  description: 'waits',
  inputSchema: { type: 'object' },
  execute: (_input, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))),
};
const clientTool = { name: 'lookup', description: 'run by the client', inputSchema: { type: 'object' }, executor: 'client' as const };

/** Runs `answers` (a scripted model) to its end, answering each wait it parks in with the next of `waits`. */
async function run(traceId: string, answers: readonly unknown[], waits: readonly WaitAnswer[], options: { abortAfterMs?: number; requiresApproval?: string[] } = {}) {
  const actors = serveActors({ model: createScriptedModel(answers), tools: [countingTool('echo').tool, broken, hang] });
  const agent = agentConfig({ allowedTools: ['echo', 'broken', 'hang', 'lookup'], requiresApproval: options.requiresApproval ?? [] });
  const env = { ...actors, tools: [...actors.tools, clientTool], agent, store: createMemoryEventStore() };
  try {
    const handle = startRun({ ...env, input: `please help (${MARK.input})`, traceId });
    if (options.abortAfterMs !== undefined) setTimeout(() => handle.abort(`the caller gave up (${MARK.abort})`), options.abortAfterMs);
    let settled = await settleRun(handle);
    for (const given of waits) {
      expect(settled.kind, traceId).toBe('waiting');
      settled = await settleRun(await answerWaitingRun({ ...env, traceId, answer: given }));
    }
    expect(settled.kind, traceId).toBe('ended');
  } finally {
    await actors.close();
  }
}

/** Every way in: a question answered by a person, a denied call, a client tool's result, a failing tool, an abort. */
async function runAll(): Promise<void> {
  await run('cc-human', [{ action: 'request_info', input: { question: MARK.question } }, answer.final(MARK.final)], [{ kind: 'human', text: MARK.human }]);
  await run('cc-denied', [answer.tool('echo', { text: MARK.toolInput }), answer.final(MARK.final)], [{ kind: 'approval', approved: false, reason: MARK.denial }], {
    requiresApproval: ['echo'],
  });
  await run('cc-client', [answer.tool('lookup', { q: MARK.toolInput }), answer.final(MARK.final)], [{ kind: 'client', result: { ok: true, output: { found: MARK.client } } }]);
  await run('cc-broken', [answer.tool('broken', { text: MARK.toolInput }), answer.final(MARK.final)], []);
  await run('cc-abort', [answer.tool('hang', {})], [], { abortAfterMs: 100 });
}

/** All a span says, as an exporter would send it. */
const spansSaid = (spans: readonly ReadableSpan[]) =>
  JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events.map((event) => [event.name, event.attributes]), span.status, span.links.map((link) => link.attributes)]));
const metricsSaid = (metrics: readonly MetricData[]) => JSON.stringify(metrics.map((metric) => [metric.descriptor.name, metric.dataPoints.map((point) => point.attributes)]));

let otel: MemoryOtel | undefined;
afterEach(async () => {
  await otel?.shutdown();
  otel = undefined;
});

describe('content on spans', () => {
  it('should carry none of what a run was given, asked, answered or told by default, on spans or metrics', async () => {
    otel = await enableMemoryOtel();
    await runAll();
    const spans = otel.spans();
    // Every run was seen: its run span and its calls' spans.
    expect(new Set(spans.map((span) => span.attributes['redflow.trace_id']))).toEqual(new Set(['cc-human', 'cc-denied', 'cc-client', 'cc-broken', 'cc-abort']));
    const said = spansSaid(spans) + metricsSaid(await otel.metrics());
    for (const [what, text] of Object.entries(MARK)) expect(said, what).not.toContain(text);
    // The codes are there: what went wrong is told without its words.
    expect(said).toContain('TOOL_FAILED');
    expect(said).toContain('RUN_ABORTED');
  });

  it('should carry each of them once the operator asks for content', async () => {
    otel = await enableMemoryOtel({ captureContent: true });
    await runAll();
    const said = spansSaid(otel.spans());
    // What the model is sent and answers (the person's answer, the denial's reason and the
    // client's result reach it as observations), the tools' inputs, their errors, the abort's reason.
    for (const [what, text] of Object.entries(MARK)) expect(said, what).toContain(text);
  });
});
