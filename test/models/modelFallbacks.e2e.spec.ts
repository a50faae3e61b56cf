import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STACK_FRAME, readVerifiedLog, runCli, type CliResult } from '../support/cli.js';
import { keyOf, startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// The real command against two local servers speaking the real wire protocols: the node's model
// on Chat Completions, its fallback on Anthropic's Messages API.

const OPENAI_KEY = 'sk-openai-fallback-test';
const ANTHROPIC_KEY = 'sk-ant-fallback-test';
const FINAL_MESSAGE = 'Order A-1001 ships tomorrow.';
const FINAL = { action: 'final', message: FINAL_MESSAGE, confidence: 0.9 };

let openAi: FakeChatServer;
let anthropic: FakeAnthropicServer;
let dir: string;

beforeAll(async () => {
  [openAi, anthropic] = await Promise.all([startFakeChatCompletionsServer(), startFakeAnthropicServer()]);
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'redflow-fallbacks-')));
});

afterAll(async () => {
  await Promise.all([openAi.stop(), anthropic.stop()]);
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  openAi.reset();
  anthropic.reset();
  // An unplanned request fails loudly rather than answering "{}".
  openAi.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  anthropic.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
});

/** A flow whose model node is OpenAI's, with `fallbacks`. */
async function writeFlow(fallbacks: unknown[], name = 'flow.json'): Promise<string> {
  const flow = {
    id: 'fallbacks',
    version: 1,
    start: 'question',
    nodes: [
      { id: 'question', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3, instructions: 'Answer questions about orders.' } },
      { id: 'model', type: 'model.llm', config: { provider: 'openai', model: 'gpt-4o-mini', baseUrl: openAi.baseUrl, maxRetries: 1, temperature: 0, fallbacks } },
      // Never called: the models answer at once; an agent needs a tool.
      { id: 'lookup', type: 'tool.http', config: { url: 'http://127.0.0.1:9/orders/{id}', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } },
      { id: 'reply', type: 'response.chat' },
    ],
    edges: [
      { id: 'e1', source: 'question', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'reply' },
      { id: 'e4', source: 'agent', target: 'lookup' },
    ],
  };
  const file = path.join(dir, name);
  await writeFile(file, JSON.stringify(flow));
  return file;
}

const anthropicFallback = () => ({ provider: 'anthropic', model: 'claude-haiku-4-5', baseUrl: anthropic.baseUrl, maxRetries: 0, maxTokens: 512 });
const secondOpenAi = () => ({ provider: 'openai-compatible', model: 'llama3.1', baseUrl: openAi.baseUrl, maxRetries: 0, apiKeyEnv: 'OPENAI_API_KEY' });

function run(flow: string): Promise<CliResult> {
  return runCli(['run', flow, '--input', 'where is order A-1001?', '--json'], { cwd: dir, env: { OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
}

interface Report {
  outcome: { status: string; reason: string; answer?: string; error?: { code: string; message: string; hint?: string } };
  log: string;
}

const report = (result: CliResult): Report => JSON.parse(result.stdout) as Report;

describe('a model node with fallbacks', () => {
  it('should have Anthropic answer when OpenAI answers 503 after its retries, and say so in the log and replay', async () => {
    openAi.enqueue({ kind: 'error', status: 503, message: 'overloaded' }, { kind: 'error', status: 503, message: 'overloaded' });
    anthropic.enqueue({ kind: 'message', content: '', toolUses: [{ name: 'react_decision', input: { decision: FINAL } }] });
    const flow = await writeFlow([anthropicFallback()]);

    const result = await run(flow);

    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.code, result.stderr).toBe(0);
    const { outcome, log } = report(result);
    expect(outcome).toEqual({ status: 'done', reason: 'final_answer', answer: FINAL_MESSAGE });
    expect(openAi.requests).toHaveLength(2);
    expect(anthropic.requests).toHaveLength(1);

    // The fallback got its own provider's request, with its own key and settings.
    const openAiBody = openAi.requests[0]?.body as Record<string, unknown>;
    const fallback = anthropic.requests[0];
    expect(fallback?.path).toBe('/v1/messages');
    expect(keyOf(fallback?.headers ?? {})).toBe(ANTHROPIC_KEY);
    expect(JSON.stringify(fallback?.headers)).not.toContain(OPENAI_KEY);
    expect(fallback?.headers['anthropic-version']).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/));
    const body = fallback?.body as Record<string, unknown>;
    expect(body.model).toBe('claude-haiku-4-5');
    expect(body.max_tokens).toBe(512);
    expect(body.stream).toBe(true);
    // Anthropic takes the system prompt beside the messages, not as one of them.
    const system = (openAiBody.messages as { role: string; content: string }[])[0];
    expect(system?.role).toBe('system');
    expect(JSON.stringify(body.system)).toContain(JSON.stringify(system?.content).slice(1, 60));
    expect(body.messages).toEqual([{ role: 'user', content: 'where is order A-1001?' }]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'react_decision' });
    expect((body.tools as { name: string }[]).map((tool) => tool.name)).toEqual(['react_decision']);
    expect(body).not.toHaveProperty('response_format');
    expect(body).not.toHaveProperty('stream_options');
    expect(body).not.toHaveProperty('temperature');

    const { text, events } = await readVerifiedLog(log);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'run.completed']);
    expect(events[2]?.data).toMatchObject({
      answeredBy: { provider: 'anthropic', model: 'claude-haiku-4-5' },
      fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini', code: 'MODEL_SERVER_ERROR', message: expect.stringContaining('HTTP 503') }],
    });
    expect(text).not.toContain(OPENAI_KEY);
    expect(text).not.toContain(ANTHROPIC_KEY);

    const replay = await runCli(['replay', log, '--steps'], { cwd: dir });
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('answered by anthropic claude-haiku-4-5 after openai gpt-4o-mini failed (MODEL_SERVER_ERROR)');
    const timeline = await runCli(['replay', log], { cwd: dir });
    expect(timeline.code, timeline.stderr).toBe(0);
    expect(timeline.stdout).toMatch(/#1 .*\n\s+answered by anthropic claude-haiku-4-5 after openai gpt-4o-mini failed \(MODEL_SERVER_ERROR\)\n/);
  });

  it('should end blocked with the last error and name every model tried when all of them fail', async () => {
    openAi.setFallback({ kind: 'error', status: 500, message: 'down' });
    anthropic.setFallback({ kind: 'error', status: 529, message: 'Overloaded' });
    const flow = await writeFlow([secondOpenAi(), anthropicFallback()]);

    const result = await run(flow);

    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.code, result.stderr).toBe(1);
    const { outcome, log } = report(result);
    expect(outcome.status).toBe('blocked');
    expect(outcome.reason).toBe('model_error');
    expect(outcome.error?.code).toBe('MODEL_SERVER_ERROR');
    expect(outcome.error?.message).toContain('openai gpt-4o-mini (MODEL_SERVER_ERROR), openai-compatible llama3.1 (MODEL_SERVER_ERROR), anthropic claude-haiku-4-5 (MODEL_SERVER_ERROR)');
    expect(outcome.error?.message).toContain('HTTP 529');
    expect(outcome.error?.hint).toContain('fallbacks');
    // The node's model with its one retry, then each fallback once.
    expect(openAi.requests.map((r) => (r.body as { model: string }).model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'llama3.1']);
    expect(anthropic.requests).toHaveLength(1);
    const { events } = await readVerifiedLog(log);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.requested', 'run.failed']);
    expect(events[2]?.data.outcome).toEqual(outcome);
  });

  it('should not fall back when the node\'s model refuses the key (401)', async () => {
    openAi.enqueue({ kind: 'error', status: 401, message: 'Incorrect API key provided' });
    const flow = await writeFlow([anthropicFallback()]);

    const result = await run(flow);

    expect(result.code, result.stderr).toBe(1);
    const { outcome } = report(result);
    expect(outcome.status).toBe('blocked');
    expect(outcome.error?.code).toBe('MODEL_REQUEST_REJECTED');
    expect(outcome.error?.message).toContain('HTTP 401');
    expect(outcome.error?.message).not.toContain('every model failed');
    expect(openAi.requests).toHaveLength(1);
    expect(anthropic.requests).toHaveLength(0);
  });

  it('should fall back when the node\'s model refuses the request\'s format', async () => {
    openAi.enqueue({ kind: 'error', status: 400, message: "Invalid parameter: 'tools' is not supported with this model." });
    anthropic.enqueue({ kind: 'message', content: '', toolUses: [{ name: 'react_decision', input: { decision: FINAL } }] });
    const flow = await writeFlow([anthropicFallback()]);

    const result = await run(flow);

    expect(result.code, result.stderr).toBe(0);
    const { events } = await readVerifiedLog(report(result).log);
    expect(events[2]?.data).toMatchObject({ fallbacks: [{ code: 'MODEL_REQUEST_REJECTED' }], answeredBy: { provider: 'anthropic' } });
  });

  it('should refuse a flow whose fallback is invalid, nested or one too many, naming where', async () => {
    const cases: [unknown[], RegExp][] = [
      [[{ provider: 'anthropic', model: 'claude-x', maxRetries: -1 }], /nodes\[2\]\.config\.fallbacks\[0\]\.maxRetries/],
      [[{ provider: 'anthropic', model: 'claude-x', fallbacks: [] }], /nodes\[2\]\.config\.fallbacks\[0\]/],
      [[{ provider: 'scripted', model: 'x' }], /nodes\[2\]\.config\.fallbacks\[0\]\.provider/],
      [Array.from({ length: 6 }, () => ({ model: 'm' })), /nodes\[2\]\.config\.fallbacks/],
    ];
    for (const [index, [fallbacks, where]] of cases.entries()) {
      const flow = await writeFlow(fallbacks, `bad-${index}.json`);
      const result = await runCli(['validate', flow], { cwd: dir });
      expect(result.code, `case ${index}`).not.toBe(0);
      expect(result.stdout + result.stderr, `case ${index}`).toContain('NODE_CONFIG_INVALID');
      expect(result.stdout + result.stderr, `case ${index}`).toMatch(where);
    }
  });
});
