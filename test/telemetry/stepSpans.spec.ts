import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createStepService } from '../../src/stepService/reactStepService.js';
import { jsonlStepLogs } from '../../src/stepService/stepLogs.js';
import { loadStepModels } from '../../src/stepService/stepModels.js';
import type { ReactStepRequest } from '../../src/stepService/reactStepTypes.js';
import { otelTraceIdOf, rootSpanIdOf } from '../../src/telemetry/traceContext.js';
import { TelemetryMetric } from '../../src/telemetry/names.js';
import { startFakeChatCompletionsServer, stopFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { enableMemoryOtel, pointsOf, type MemoryOtel } from './otelSupport.js';

// The ReAct step service (`POST /api/agent/react_step`) with telemetry on: each step is a stretch
// of its query's run, its model calls `chat <model>` spans below it. The model is the OpenAI
// provider of a models file, against a local server speaking Chat Completions.

const USER_KEY = 'sk-user-step-otel-7d1e0b';
const QUERY = 'How is authentication implemented? (query-words-5T)';
const OBSERVATION = 'auth.js: export function login() {} (observation-words-2W)';
const ANSWER = 'It is in auth.js (answer-words-6N)';

let server: FakeChatServer;
let dir: string;
let otel: MemoryOtel | undefined;

beforeAll(async () => {
  server = await startFakeChatCompletionsServer();
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-step-otel-'));
  await writeFile(path.join(dir, 'models.json'), JSON.stringify({ models: { 'gpt-4o': { provider: 'openai', model: 'gpt-4o', baseUrl: server.baseUrl, maxRetries: 0 } } }));
});
afterAll(async () => {
  await stopFakeChatCompletionsServer(server);
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => server.reset());
afterEach(async () => {
  await otel?.shutdown();
  otel = undefined;
});

const completion = (content: string, promptTokens: number) => ({ kind: 'completion', content, usage: { prompt_tokens: promptTokens, completion_tokens: 4, total_tokens: promptTokens + 4 }, finishReason: 'stop' }) as const;

const request = (session: string, extra: Partial<ReactStepRequest> = {}): ReactStepRequest => ({
  session_id: session,
  user_query: QUERY,
  conversation_history: [],
  available_tools_prompt_segment: 'You have access to: code_search(query)',
  llm_config: { modelName: 'gpt-4o' },
  user_api_keys: { llmKey: USER_KEY },
  max_iterations_left: 3,
  ...extra,
});

/** A session of two steps: a tool call proposed, then the answer after the client's observation. */
async function session(id: string) {
  const service = createStepService({ logs: jsonlStepLogs(path.join(dir, id)), models: await loadStepModels(path.join(dir, 'models.json'), {}) });
  server.enqueue(completion('Thought: search.\nAction: code_search(query="auth")', 30), completion(`Final Answer: ${ANSWER}`, 50));
  const first = await service.step(request(id));
  expect(first.status).toBe('action_proposed');
  const second = await service.step(
    request(id, { user_query: '', conversation_history: [...first.updated_conversation_history, { role: 'tool_observation', content: OBSERVATION, toolResult: { success: true, result: OBSERVATION } }] }),
  );
  expect(second).toMatchObject({ status: 'direct_response_provided', direct_response: ANSWER });
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('telemetry of the step service', () => {
  it("should make each step a stretch of its query's run, with a chat span named by the model for each model call", async () => {
    otel = await enableMemoryOtel();
    await session('step-otel-1');
    const spans = otel.spans();
    const traceId = otelTraceIdOf('step-otel-1-q1');
    expect(spans.map((span) => span.spanContext().traceId)).toEqual(spans.map(() => traceId));

    const stretches = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'invoke_agent');
    expect(stretches.map((span) => [span.attributes['redflow.resumed'], span.attributes['redflow.left'], span.attributes['redflow.outcome.status']])).toEqual([
      [false, 'waiting', undefined],
      [true, undefined, 'done'],
    ]);
    // The session ties its queries' traces together.
    for (const stretch of stretches) expect(stretch.attributes['gen_ai.conversation.id']).toBe('step-otel-1');
    expect(stretches.map(parentOf)).toEqual([rootSpanIdOf('step-otel-1-q1'), rootSpanIdOf('step-otel-1-q1')]);

    const chats = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat');
    expect(chats.map((span) => span.name)).toEqual(['chat gpt-4o', 'chat gpt-4o']);
    expect(chats.map(parentOf)).toEqual(stretches.map((span) => span.spanContext().spanId));
    for (const [index, chat] of chats.entries()) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.status.code).toBe(SpanStatusCode.UNSET);
      expect(chat.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': [30, 50][index],
        'gen_ai.usage.output_tokens': 4,
        'redflow.iteration': index + 1,
      });
    }
    const metrics = await otel.metrics();
    expect(pointsOf(metrics, TelemetryMetric.TokenUsage).map((point) => point.attributes['gen_ai.request.model'])).toEqual(['gpt-4o', 'gpt-4o']);
  });

  it("should put neither the user's key nor the query, the observation or the answer on a span by default", async () => {
    otel = await enableMemoryOtel();
    await session('step-otel-2');
    const said = JSON.stringify(otel.spans().map((span) => [span.name, span.attributes, span.events, span.status, span.links]));
    expect(said).toContain('chat gpt-4o');
    for (const content of [USER_KEY, 'query-words-5T', 'observation-words-2W', 'answer-words-6N', 'code_search(query']) expect(said, content).not.toContain(content);
  });

  it("should record the messages with content capture on, but never the user's key, even echoed in the provider's error", async () => {
    otel = await enableMemoryOtel({ captureContent: true });
    await session('step-otel-3');
    const service = createStepService({ logs: jsonlStepLogs(path.join(dir, 'step-otel-3b')), models: await loadStepModels(path.join(dir, 'models.json'), {}) });
    server.enqueue({ kind: 'error', status: 401, message: `Incorrect API key provided: ${USER_KEY}` });
    expect((await service.step(request('step-otel-3b'))).status).toBe('error');
    const spans = otel.spans();
    const said = JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events, span.status]));
    expect(said).toContain('query-words-5T');
    expect(said).toContain('observation-words-2W');
    expect(said).toContain('Incorrect API key provided');
    expect(said).not.toContain(USER_KEY);
  });
});
