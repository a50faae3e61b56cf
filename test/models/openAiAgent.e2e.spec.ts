import { existsSync } from 'node:fs';
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import calculator from '../../examples/openai-agent/tools/calculator.js';
import { REPO_ROOT, STACK_FRAME, readVerifiedLog, runCli, type CliResult } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// The real command, the real example flow (model.llm "openai" without a model name, the calculator
// as a tool.module) and a real HTTP server speaking the Chat Completions wire protocol.

const FLOW = path.join(REPO_ROOT, 'examples', 'openai-agent', 'flow.json');
const QUESTION = 'what is 12.5 * 8?';
const API_KEY = 'sk-test-secret';

/** What a model following the prompt says first: call the calculator. */
const TOOL_CALL = JSON.stringify({
  action: 'tool',
  tool: 'calculator',
  input: { operation: 'multiply', a: 12.5, b: 8 },
  confidence: 0.8,
});
const FINAL_MESSAGE = '12.5 * 8 = 100';
/** …and then, with the observation, the final answer. */
const FINAL = JSON.stringify({ action: 'final', message: FINAL_MESSAGE, confidence: 0.95 });

interface ChatBody {
  model: string;
  stream: boolean;
  response_format?: { type: string };
  temperature?: number;
  messages: { role: string; content: string }[];
}

let server: FakeChatServer;
let dir: string;

beforeEach(async () => {
  server = await startFakeChatCompletionsServer();
  // The fallback would answer "{}": make any unplanned request fail loudly instead.
  server.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'redflow-openai-e2e-')));
});

afterEach(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

function modelEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return { OPENAI_BASE_URL: server.baseUrl, REDFLOW_MODEL: 'test-model', OPENAI_API_KEY: API_KEY, ...overrides };
}

function runAgent(env: Record<string, string> = modelEnv()): Promise<CliResult> {
  return runCli(['run', FLOW, '--input', QUESTION, '--json'], { cwd: dir, env });
}

interface JsonReport {
  traceId: string;
  outcome: { status: string; reason: string; answer?: string; error?: { code: string; message: string; hint?: string } };
  log: string;
}

function report(result: CliResult): JsonReport {
  return JSON.parse(result.stdout) as JsonReport;
}

function body(index: number): ChatBody {
  const request = server.requests[index];
  expect(request, `request #${index + 1}`).toBeDefined();
  return request?.body as ChatBody;
}

describe('the openai-agent example against a Chat Completions server', () => {
  it('should call the calculator, feed its observation back and print the final answer', async () => {
    server.enqueue({ kind: 'completion', content: TOOL_CALL }, { kind: 'completion', content: FINAL });

    const result = await runAgent();

    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.code, result.stderr).toBe(0);
    const { outcome, log } = report(result);
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: FINAL_MESSAGE });
    // The default log location is relative to the working directory.
    expect(path.dirname(log)).toBe(path.join(dir, '.redflow', 'runs'));

    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v1/chat/completions');
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request.headers['content-type']).toMatch(/^application\/json/);
    }

    const first = body(0);
    expect(first).toMatchObject({ model: 'test-model', stream: true, stream_options: { include_usage: true }, response_format: { type: 'json_schema', json_schema: { name: 'react_decision', strict: true } }, temperature: 0 });
    expect(first.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(first.messages[1]?.content).toBe(QUESTION);
    const system = first.messages[0]?.content ?? '';
    expect(system).toContain(`- calculator: ${calculator.description}`);
    expect(system).toContain(`input schema: ${JSON.stringify(calculator.inputSchema)}`);
    expect(system).toContain('Use the calculator for every operation');

    const second = body(1);
    expect(second.messages[0]).toEqual(first.messages[0]);
    expect(second.messages[1]).toEqual(first.messages[1]);
    const decision = second.messages[2];
    expect(decision?.role).toBe('assistant');
    expect(JSON.parse(decision?.content ?? 'null')).toEqual({
      action: 'tool',
      tool: 'calculator',
      input: { operation: 'multiply', a: 12.5, b: 8 },
    });
    const observation = second.messages[3];
    expect(observation?.role).toBe('user');
    expect(observation?.content).toContain('{"result":100}');
    expect(second.messages).toHaveLength(4);

    const { text, events } = await readVerifiedLog(log);
    expect(events.map((e) => e.type)).toEqual([
      'run.started',
      'model.requested',
      'model.answered',
      'tool.requested',
      'tool.completed',
      'model.requested',
      'model.answered',
      'run.completed',
    ]);
    expect(events[4]?.data).toMatchObject({ tool: 'calculator', ok: true, output: { result: 100 } });
    expect(events[2]?.data).toMatchObject({ text: TOOL_CALL, attempts: 1, usage: { promptTokens: 10, completionTokens: 5 } });

    // The key was sent, but is nowhere else.
    expect(text).not.toContain(API_KEY);
    expect(result.stdout).not.toContain(API_KEY);
    expect(result.stderr).not.toContain(API_KEY);
  });

  it('should retry a 429 with Retry-After: 0 and record the attempts in the log', async () => {
    server.enqueue(
      { kind: 'error', status: 429, message: 'Rate limit reached', type: 'requests', retryAfter: '0' },
      { kind: 'completion', content: TOOL_CALL },
      { kind: 'completion', content: FINAL },
    );

    const result = await runAgent();

    expect(result.code, result.stderr).toBe(0);
    const { outcome, log } = report(result);
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: FINAL_MESSAGE });
    expect(server.requests).toHaveLength(3);
    // The retry re-sent the very same request.
    expect(server.requests[1]?.rawBody).toBe(server.requests[0]?.rawBody);
    const { text, events } = await readVerifiedLog(log);
    const answered = events.filter((e) => e.type === 'model.answered');
    expect(answered.map((e) => e.data.attempts)).toEqual([2, 1]);
    expect(text).not.toContain(API_KEY);
  });

  it('should end blocked with MODEL_SERVER_ERROR and a hint when every attempt gets a 500', async () => {
    server.setFallback({ kind: 'error', status: 500, message: `upstream exploded for key ${API_KEY}` });

    const result = await runAgent();

    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.code, result.stderr).toBe(1);
    const { outcome, log } = report(result);
    expect(outcome.status).toBe('blocked');
    expect(outcome.reason).toBe('model_error');
    expect(outcome.error?.code).toBe('MODEL_SERVER_ERROR');
    expect(outcome.error?.message).toContain('HTTP 500');
    expect(outcome.error?.message).toContain('gave up after 4 attempts');
    expect(outcome.error?.hint).toEqual(expect.stringMatching(/\S/));
    // maxRetries 3 in the flow: one attempt and three retries.
    expect(server.requests).toHaveLength(4);

    const { text, events } = await readVerifiedLog(log);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.requested', 'run.failed']);
    expect(events[2]?.data.outcome).toEqual(outcome);
    // The server echoed the key in its error message; it must have been redacted everywhere.
    expect(outcome.error?.message).toContain('[redacted]');
    expect(text).not.toContain(API_KEY);
    expect(result.stdout).not.toContain(API_KEY);
    expect(result.stderr).not.toContain(API_KEY);
  });

  it('should refuse to start with MODEL_CONFIG_INVALID and a hint when no model name is set', async () => {
    const env = modelEnv();
    delete env.REDFLOW_MODEL;

    const result = await runAgent(env);

    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.stderr).toContain('error MODEL_CONFIG_INVALID');
    expect(result.stderr).toMatch(/^hint: .*REDFLOW_MODEL/m);
    expect(result.stdout).toBe('');
    expect(server.requests).toHaveLength(0);
    // Nothing ran, so no log was started.
    expect(existsSync(path.join(dir, '.redflow', 'runs')) ? await readdir(path.join(dir, '.redflow', 'runs')) : []).toEqual([]);
  });
});
