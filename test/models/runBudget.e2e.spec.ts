import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STACK_FRAME, readVerifiedLog, runCli, type CliResult, type LoggedEvent } from '../support/cli.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// Run budgets (agent `budget`) through the real command against local servers speaking OpenAI's
// Chat Completions and Anthropic's Messages protocols: what they report, what the tokenizer
// estimates when they report nothing, and a budget that survives a SIGKILL and a resume.

const KEY = 'sk-budget-test';
const TOOL_CALL = (order: string) => JSON.stringify({ action: 'tool', tool: 'lookup', input: { order }, confidence: 0.5 });
const FINAL = JSON.stringify({ action: 'final', message: 'All orders shipped.', confidence: 0.9 });
/** What each call reports: 450 tokens, so a 1000-token budget pays for two calls and not a third. */
const USAGE = { prompt_tokens: 400, completion_tokens: 50, total_tokens: 450 };

let openAi: FakeChatServer;
let anthropic: FakeAnthropicServer;
let dir: string;

beforeAll(async () => {
  [openAi, anthropic] = await Promise.all([startFakeChatCompletionsServer(), startFakeAnthropicServer()]);
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'redflow-budget-')));
  await writeFile(
    path.join(dir, 'lookup.mjs'),
    `export default { name: 'lookup', description: 'Finds an order', inputSchema: { type: 'object', properties: { order: { type: 'string' } } }, execute: (input) => ({ order: input.order, status: 'shipped' }) };\n`,
  );
});

afterAll(async () => {
  await Promise.all([openAi.stop(), anthropic.stop()]);
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  openAi.reset();
  anthropic.reset();
  // A model that would go on calling tools (up to maxIterations): only the budget stops the run.
  callsTools(USAGE);
  openAi.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
});

/** Queues ten tool calls (A-1, A-2, …), each reporting `usage` (`null`: none). */
function callsTools(usage: typeof USAGE | null): void {
  openAi.reset();
  for (let n = 1; n <= 10; n += 1) openAi.enqueue({ kind: 'completion', content: TOOL_CALL(`A-${n}`), usage });
}

async function writeFlow(name: string, budget: unknown, model: Record<string, unknown> = { provider: 'openai', model: 'gpt-4o-mini', baseUrl: openAi.baseUrl }): Promise<string> {
  const flow = {
    id: 'budget',
    version: 1,
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 10, allowedTools: ['lookup'], budget } },
      { id: 'model', type: 'model.llm', config: { maxRetries: 0, ...model } },
      { id: 'lookup', type: 'tool.module', config: { module: 'lookup.mjs' } },
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'lookup' },
    ],
  };
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(flow));
  return file;
}

function run(flow: string, log: string, env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(['run', flow, '--input', 'Where are my orders?', '--json', '--log', log], { cwd: dir, env: { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY, ...env } });
}

interface Outcome {
  status: string;
  reason: string;
  answer?: string;
  error?: { code: string; message: string; hint?: string };
}

const outcomeOf = (result: CliResult): Outcome => (JSON.parse(result.stdout) as { outcome: Outcome }).outcome;
const answered = (events: readonly LoggedEvent[]) => events.filter((e) => e.type === 'model.answered').map((e) => e.data.usage as Record<string, unknown>);

/** The tokens a request's messages take, counted as the budget counts them: each message's text, 4 for its framing, 3 for the reply's priming. */
function requestTokens(body: unknown): number {
  const messages = (body as { messages: { content: string }[] }).messages;
  return messages.reduce((sum, message) => sum + countTokens(message.content) + 4, 3);
}

describe('a run with a token budget', () => {
  it('should stop before the call that would overspend the tokens the provider reports, keeping the last tool result', async () => {
    const flow = await writeFlow('reported', { maxTokens: 1000 });
    const log = path.join(dir, 'reported.jsonl');

    const result = await run(flow, log);

    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.code, result.stderr).toBe(0);
    const outcome = outcomeOf(result);
    expect(outcome).toMatchObject({ status: 'done_partial', reason: 'budget_exhausted', answer: 'lookup: {"order":"A-2","status":"shipped"}' });
    expect(outcome.error?.code).toBe('BUDGET_EXHAUSTED');
    expect(outcome.error?.message).toMatch(/of budget\.maxTokens 1000 are left/);
    // Two calls of 450 tokens: the third one's input alone does not fit the 100 left.
    expect(openAi.requests).toHaveLength(2);
    const { events } = await readVerifiedLog(log);
    const usages = answered(events);
    // The provider's counts as reported, priced by the shipped table (gpt-4o-mini: $0.15 / $0.60 per million).
    expect(usages).toEqual([
      { promptTokens: 400, completionTokens: 50, totalTokens: 450, costUsd: expect.closeTo(0.00009, 12) },
      { promptTokens: 400, completionTokens: 50, totalTokens: 450, costUsd: expect.closeTo(0.00009, 12) },
    ]);
    expect(events.map((e) => e.type).slice(-3)).toEqual(['tool.requested', 'tool.completed', 'run.completed']);

    const replay = await runCli(['replay', log], { cwd: dir });
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('total  tokens 800 in / 100 out $0.00018 (900) over 2 model calls');
    expect(replay.stdout).toContain('done_partial (budget_exhausted) BUDGET_EXHAUSTED');
  });

  it("should count with the tokenizer when the provider reports no usage, and log the counts as estimates", async () => {
    callsTools(null);
    const flow = await writeFlow('estimated', { maxTokens: 2000 });
    const log = path.join(dir, 'estimated.jsonl');

    const result = await run(flow, log);

    expect(result.code, result.stderr).toBe(0);
    expect(outcomeOf(result)).toMatchObject({ status: 'done_partial', reason: 'budget_exhausted' });
    const { events } = await readVerifiedLog(log);
    const usages = answered(events);
    expect(usages.length).toBe(openAi.requests.length);
    expect(usages.length).toBeGreaterThan(1);
    // Each call's count is the tokenizer's of what was sent and what came back (gpt-4o-mini: o200k, exact).
    usages.forEach((usage, index) => {
      const promptTokens = requestTokens(openAi.requests[index]?.body);
      const completionTokens = countTokens(TOOL_CALL(`A-${index + 1}`));
      expect(usage).toEqual({ promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, estimated: true, costUsd: expect.any(Number) });
    });
    const spent = usages.reduce((sum, usage) => sum + (usage.totalTokens as number), 0);
    expect(spent).toBeLessThanOrEqual(2000);
    // The call not made: its input would not have fitted what was left.
    const next = requestTokens(openAi.requests[openAi.requests.length - 1]?.body) + 60;
    expect(spent + next).toBeGreaterThan(2000);

    const replay = await runCli(['replay', log], { cwd: dir });
    expect(replay.stdout).toMatch(/#1 .*tokens ≈\d+ in \/ ≈\d+ out \$/);
  });

  it('should end blocked, with no call made, when the first input alone is over the budget', async () => {
    const flow = await writeFlow('tiny', { maxTokens: 50 });
    const log = path.join(dir, 'tiny.jsonl');

    const result = await run(flow, log);

    expect(result.code, result.stderr).toBe(1);
    expect(outcomeOf(result)).toMatchObject({ status: 'blocked', reason: 'budget_exhausted', error: { code: 'BUDGET_EXHAUSTED' } });
    expect(openAi.requests).toHaveLength(0);
    const { events } = await readVerifiedLog(log);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'run.failed']);
  });

  it('should still take a final answer that arrives past the budget (the call is paid for)', async () => {
    openAi.reset();
    openAi.enqueue({ kind: 'completion', content: FINAL, usage: { prompt_tokens: 900, completion_tokens: 200, total_tokens: 1100 } });
    const flow = await writeFlow('final', { maxTokens: 1000 });

    const result = await run(flow, path.join(dir, 'final.jsonl'));

    expect(result.code, result.stderr).toBe(0);
    expect(outcomeOf(result)).toEqual({ status: 'done', reason: 'final_answer', answer: 'All orders shipped.' });
  });

  it('should meter an Anthropic model by the usage its Messages stream reports', async () => {
    anthropic.setFallback({ kind: 'message', content: '', toolUses: [{ name: 'react_decision', input: { decision: JSON.parse(TOOL_CALL('A-1')) as unknown } }], usage: { input_tokens: 300, output_tokens: 100 } });
    const flow = await writeFlow('anthropic', { maxTokens: 600, maxCost: 1 }, { provider: 'anthropic', model: 'claude-sonnet-4-20250514', baseUrl: anthropic.baseUrl, maxTokens: 512 });
    const log = path.join(dir, 'anthropic.jsonl');

    const result = await run(flow, log);

    expect(result.code, result.stderr).toBe(0);
    expect(outcomeOf(result)).toMatchObject({ status: 'done_partial', reason: 'budget_exhausted' });
    expect(anthropic.requests).toHaveLength(1);
    const { events } = await readVerifiedLog(log);
    // claude-sonnet-4 by the shipped table: $3 in, $15 out per million tokens.
    expect(answered(events)).toEqual([{ promptTokens: 300, completionTokens: 100, totalTokens: 400, costUsd: expect.closeTo(0.0024, 12) }]);
  });
});

describe('a run with a cost budget', () => {
  it("should price calls by the agent's own table over the shipped one, and stop before overspending it", async () => {
    // $1000 per million tokens: 450 tokens cost $0.45, and the next input alone would pass $0.50.
    const flow = await writeFlow('priced', { maxCost: 0.5, prices: { 'gpt-4o-mini': { input: 1000, output: 1000 } } });
    const log = path.join(dir, 'priced.jsonl');

    const result = await run(flow, log);

    expect(result.code, result.stderr).toBe(0);
    const outcome = outcomeOf(result);
    expect(outcome).toMatchObject({ status: 'done_partial', reason: 'budget_exhausted' });
    expect(outcome.error?.message).toMatch(/would cost about \$0\.\d+, and \$0\.05 of budget\.maxCost \$0\.5 are left/);
    expect(openAi.requests).toHaveLength(1);
    const { events } = await readVerifiedLog(log);
    expect(answered(events)).toEqual([{ promptTokens: 400, completionTokens: 50, totalTokens: 450, costUsd: expect.closeTo(0.45, 12) }]);
  });

  it('should go on where the shipped prices leave room', async () => {
    openAi.reset();
    openAi.enqueue({ kind: 'completion', content: TOOL_CALL('A-1'), usage: USAGE }, { kind: 'completion', content: FINAL, usage: USAGE });
    const flow = await writeFlow('cheap', { maxCost: 0.5 });

    const result = await run(flow, path.join(dir, 'cheap.jsonl'));

    expect(result.code, result.stderr).toBe(0);
    expect(outcomeOf(result)).toMatchObject({ status: 'done', reason: 'final_answer' });
    expect(openAi.requests).toHaveLength(2);
  });
});

describe('a budget after a crash', () => {
  it('should be folded from the log: a run killed after its first call and resumed spends what is left, not a new budget', async () => {
    const flow = await writeFlow('crash', { maxTokens: 1000 });
    const log = path.join(dir, 'crash.jsonl');

    // Killed right after the first tool's result is logged (run.started, model.requested, model.answered, tool.requested, tool.completed).
    const killed = await run(flow, log, { REDFLOW_CRASH_AFTER_EVENT: '5' });
    expect(killed.signal).toBe('SIGKILL');
    expect(openAi.requests).toHaveLength(1);
    const resumed = await runCli(['resume', log, '--json'], { cwd: dir, env: { OPENAI_API_KEY: KEY } });

    expect(resumed.code, resumed.stderr).toBe(0);
    expect(outcomeOf(resumed)).toMatchObject({ status: 'done_partial', reason: 'budget_exhausted', answer: 'lookup: {"order":"A-2","status":"shipped"}' });
    // 450 spent before the crash, 450 after: a budget started afresh would have paid for a third call.
    expect(openAi.requests).toHaveLength(2);
    const { events } = await readVerifiedLog(log);
    expect(events.map((e) => e.type).filter((type) => type === 'model.answered')).toHaveLength(2);
    expect(events.some((e) => e.type === 'run.resumed')).toBe(true);
  });
});

describe('a budget that is not one', () => {
  it.each([
    ['a negative token limit', { maxTokens: -5 }],
    ['a token limit that is not a number', { maxTokens: '1000' }],
    ['a cost limit of zero', { maxCost: 0 }],
    ['a price that is not a number', { prices: { 'gpt-4o-mini': { input: 'cheap', output: 1 } } }],
  ])('should refuse %s with a coded config error, making no call', async (_, budget) => {
    const flow = await writeFlow('bad', budget);

    const result = await run(flow, path.join(dir, 'bad.jsonl'));

    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.code).not.toBe(0);
    // Found when the flow is loaded: its agent.core's config breaks the schema.
    expect(result.stderr).toMatch(/NODE_CONFIG_INVALID nodes\[1\]\.config\.budget\./);
    expect(openAi.requests).toHaveLength(0);
  });

  it('should refuse a cost limit for a model with no price, naming the model and how to price it', async () => {
    const flow = await writeFlow('unpriced', { maxCost: 1 }, { provider: 'openai-compatible', model: 'llama3.1', baseUrl: openAi.baseUrl, apiKeyEnv: 'OPENAI_API_KEY' });

    const result = await run(flow, path.join(dir, 'unpriced.jsonl'));

    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('BUDGET_CONFIG_INVALID');
    expect(result.stderr).toContain('"llama3.1" has no price');
    expect(result.stderr).toContain('budget.prices');
    expect(openAi.requests).toHaveLength(0);
  });
});
