import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { loadFlowFile } from '../../src/flows/loadFlow.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import { defineAgent } from '../../src/agents/agentDefinition.js';
import { codeBlocks, readPage } from '../docs/docPages.js';
import { startFakeChatCompletionsServer, stopFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// An agent that verifies with a model of its own (`verification.model`): its final answer goes to
// the verifier's server, never to the run's, and the log says which model verified.

const FINAL = JSON.stringify({ action: 'final', message: 'Paris is the capital of France.', confidence: 0.9 });
const PASSED = JSON.stringify({
  checks: ['completeness', 'consistency', 'correctness', 'constraints'].map((name) => ({ name, passed: true, basis: `${name} holds` })),
});

let dir: string;
let main: FakeChatServer;
let judge: FakeChatServer;

function flowWith(verifierModel: unknown, judgeNode = true, budget?: unknown) {
  return {
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3, verification: { model: verifierModel, maxFailures: 1 }, ...(budget !== undefined && { budget }) } },
      { id: 'llm', type: 'model.llm', config: { provider: 'openai-compatible', model: 'main-model', baseUrl: main.baseUrl, apiKeyEnv: 'FAKE_KEY' } },
      { id: 'weather', type: 'tool.http', config: { url: 'http://127.0.0.1:9/weather', method: 'GET', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } } },
      ...(judgeNode ? [{ id: 'judge', type: 'model.llm', config: { provider: 'openai-compatible', model: 'judge-model', baseUrl: judge.baseUrl, apiKeyEnv: 'FAKE_KEY' } }] : []),
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'llm' },
      { id: 'e3', source: 'agent', target: 'weather' },
    ],
  };
}

async function run(flow: unknown, name: string) {
  const flowPath = path.join(dir, `${name}.json`);
  await writeFile(flowPath, JSON.stringify(flow));
  const events: AgentEvent[] = [];
  const started = await runFlowFile({ flowPath, input: 'What is the capital of France?', logPath: path.join(dir, `${name}.jsonl`), env: { FAKE_KEY: 'sk-fake-verifier-test-key-51b7' }, onEvent: (event) => events.push(event) });
  const result = await started.finished();
  return { result, events };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-verifier-'));
  [main, judge] = await Promise.all([startFakeChatCompletionsServer(), startFakeChatCompletionsServer()]);
});

afterAll(async () => {
  await Promise.all([stopFakeChatCompletionsServer(main), stopFakeChatCompletionsServer(judge)]);
  if (!process.env.KEEP) await rm(dir, { recursive: true, force: true });
});

const systemPromptOf = (body: unknown) => ((body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === 'system')?.content ?? '');
const isVerification = (body: unknown) => systemPromptOf(body).includes("You verify an agent's final answer");

describe('an agent that verifies with a model of its own', () => {
  it('should send the verification to the verifier node and only the run turns to the run model', async () => {
    main.reset();
    judge.reset();
    main.setFallback({ kind: 'completion', content: FINAL });
    judge.setFallback({ kind: 'completion', content: PASSED });
    const { result, events } = await run(flowWith('judge'), 'by-node');
    expect(result.outcome.status).toBe('done');
    expect(result.outcome.verification?.passed).toBe(true);
    expect(judge.requests).toHaveLength(1);
    expect(isVerification(judge.requests[0]?.body)).toBe(true);
    expect((judge.requests[0]?.body as { model: string }).model).toBe('judge-model');
    expect(main.requests.length).toBeGreaterThan(0);
    expect(main.requests.some((request) => isVerification(request.body))).toBe(false);
    const completed = events.find((event) => event.type === 'verification.completed');
    expect(completed?.data).toMatchObject({ passed: true, model: { provider: 'openai', model: 'judge-model' } });
  });

  it("should count the verifier's tokens and cost in the run's budget", async () => {
    main.reset();
    judge.reset();
    main.setFallback({ kind: 'completion', content: FINAL, usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } });
    judge.setFallback({ kind: 'completion', content: PASSED, usage: { prompt_tokens: 400, completion_tokens: 50, total_tokens: 450 } });
    const prices = { 'main-model': { input: 1, output: 1 }, 'judge-model': { input: 10, output: 20 } };
    const { result, events } = await run(flowWith('judge', true, { maxTokens: 5_000, prices }), 'budget-counted');
    expect(result.outcome.verification?.passed).toBe(true);
    const verified = events.find((event) => event.type === 'verification.completed');
    // Priced as the judge's model, not the run's.
    expect(verified?.data).toMatchObject({ usage: { promptTokens: 400, completionTokens: 50, totalTokens: 450, costUsd: (400 * 10 + 50 * 20) / 1e6 } });
    expect(result.envelope.observability.usage).toMatchObject({ totalTokens: 570, costUsd: (120 + 400 * 10 + 50 * 20) / 1e6 });
  });

  it("should not call the verifier when its request would overspend the budget, and keep the answer unverified", async () => {
    main.reset();
    judge.reset();
    main.setFallback({ kind: 'completion', content: FINAL, usage: { prompt_tokens: 900, completion_tokens: 20, total_tokens: 920 } });
    judge.setFallback({ kind: 'completion', content: PASSED });
    const { result } = await run(flowWith('judge', true, { maxTokens: 1_000 }), 'budget-refused');
    expect(judge.requests).toHaveLength(0);
    expect(result.outcome).toMatchObject({ status: 'done_partial', reason: 'budget_exhausted', answer: 'Paris is the capital of France.', error: { code: 'BUDGET_EXHAUSTED' } });
    expect(result.outcome.error?.message).toContain("the next model call's input alone");
  });

  it('should take inline model settings as the verifier', async () => {
    main.reset();
    judge.reset();
    main.setFallback({ kind: 'completion', content: FINAL });
    judge.setFallback({ kind: 'completion', content: PASSED });
    const inline = { provider: 'openai-compatible', model: 'inline-judge', baseUrl: judge.baseUrl, apiKeyEnv: 'FAKE_KEY' };
    const { result, events } = await run(flowWith(inline, false), 'inline');
    expect(result.outcome.verification?.passed).toBe(true);
    expect(judge.requests.map((request) => (request.body as { model: string }).model)).toEqual(['inline-judge']);
    expect(main.requests.some((request) => isVerification(request.body))).toBe(false);
    expect(events.find((event) => event.type === 'verification.completed')?.data).toMatchObject({ model: { model: 'inline-judge' } });
  });

  it("should send an agent definition's verification to the model its runConfig names", async () => {
    main.reset();
    judge.reset();
    main.setFallback({ kind: 'completion', content: FINAL });
    judge.setFallback({ kind: 'completion', content: PASSED });
    const settings = (model: string, baseUrl: string) => ({ provider: 'openai-compatible' as const, model, baseUrl, apiKeyEnv: 'FAKE_KEY' });
    const agent = defineAgent({
      name: 'geographer',
      description: 'Answers geography questions.',
      promptConfig: { systemPrompt: 'You answer geography questions.', query: 'What is the capital of France?' },
      modelConfig: settings('main-model', main.baseUrl),
      runConfig: { maxTurns: 3, verification: { model: settings('definition-judge', judge.baseUrl) } },
    });
    const executor = new AgentExecutor({ runsDir: dir, env: { FAKE_KEY: 'sk-fake-verifier-test-key-51b7' } });
    const result = await executor.execute(agent);
    expect(result.outcome.verification?.passed).toBe(true);
    expect(judge.requests.map((request) => (request.body as { model: string }).model)).toEqual(['definition-judge']);
    expect(main.requests.some((request) => isVerification(request.body))).toBe(false);
  });

  it('should run the flow of docs/verification.md, its judge node verifying', async () => {
    const flow = codeBlocks(readPage('docs/verification.md')).filter((block) => block.lang === 'json').find((block) => block.code.includes('"judge"'))?.code;
    const { result, events } = await run(JSON.parse(flow as string), 'doc-flow');
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'Paris.', verification: { passed: true, failures: 0 } });
    expect(events.find((event) => event.type === 'verification.completed')?.data).toMatchObject({ passed: true, model: { provider: 'scripted' } });
  });

  it('should refuse a verifier model the flow does not have, with VERIFIER_MODEL_NOT_FOUND', async () => {
    const flowPath = path.join(dir, 'missing.json');
    await writeFile(flowPath, JSON.stringify(flowWith('nope', false)));
    const { validation } = await loadFlowFile(flowPath);
    expect(validation.ok).toBe(false);
    const errors = validation.ok ? [] : validation.errors;
    expect(errors.map((error) => error.code)).toEqual(['VERIFIER_MODEL_NOT_FOUND']);
    expect(errors[0]?.message).toContain("'nope'");
    expect(errors[0]?.hint).toContain("'llm'");
  });
});
