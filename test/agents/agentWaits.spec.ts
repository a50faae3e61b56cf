import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/agentDefinition.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import { defineTool } from '../../src/agents/agentTool.js';
import { validators } from '../../src/contracts/schemas.js';
import { ErrorCode } from '../../src/errors.js';
import { fold } from '../../src/events/evolve.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { pendingWait } from '../../src/events/pendingWait.js';
import { RunWaitingError } from '../../src/runtime/runWaitingError.js';
import { answer } from '../support/harness.js';

// An agent definition may have no tools, and tools that wait: one that requires a person's
// approval, one the client runs. Such a run parks in its JSONL log as a flow's does (execute
// rejects with RunWaitingError) and goes on from the log with the answer.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-agent-waits-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The refund tool (it requires approval) and what it was called with. */
function refunds() {
  const made: { order: string; amount: number }[] = [];
  const tool = defineTool({
    name: 'refund',
    description: 'Refunds an order',
    inputSchema: z.object({ order: z.string(), amount: z.number().positive() }),
    requiresApproval: true,
    execute: (input) => {
      made.push(input);
      return { refunded: input.amount };
    },
  });
  return { tool, made };
}

const askUser = defineTool({ name: 'ask_user', description: 'Asks the person using the app', inputSchema: z.object({ question: z.string() }), executor: 'client' });

function desk(answers: readonly unknown[], tools: AgentDefinition['toolConfig']): AgentDefinition {
  return {
    name: 'refund-desk',
    description: 'Refunds orders',
    promptConfig: { systemPrompt: 'You refund orders when asked.', query: 'Refund order A-1 (30 EUR).' },
    modelConfig: { provider: 'scripted', answers: [...answers] },
    runConfig: { maxTurns: 4, waitTimeoutMs: 3_600_000 },
    ...(tools !== undefined && { toolConfig: tools }),
  };
}

/** What `execute` rejected with: the run parked in its log. */
async function parked(promise: Promise<unknown>): Promise<RunWaitingError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RunWaitingError);
  return error as RunWaitingError;
}

const logOf = (traceId: string) => path.join(dir, `${traceId}.jsonl`);

describe('an agent definition without tools', () => {
  it('should answer directly, told it has no tools, its log valid against the event schema', async () => {
    const definition = defineAgent({
      name: 'poet',
      description: 'Writes a line',
      promptConfig: { systemPrompt: 'You write one line of verse.', query: 'A line about rain.' },
      modelConfig: { provider: 'scripted', answers: [{ action: 'final', output: { line: 'Rain taps the glass.' }, confidence: 0.9 }] },
      outputConfig: { outputName: 'verse', schema: z.object({ line: z.string().min(1) }) },
    });
    const result = await new AgentExecutor({ runsDir: dir }).execute(definition);
    expect(result).toMatchObject({ success: true, validated: true, output: { line: 'Rain taps the glass.' }, turnCount: 1 });
    const { events } = await readJsonlLog(result.logPath as string);
    expect((events[0]?.data as { agent: { allowedTools: unknown[] }; tools: unknown[] }).agent.allowedTools).toEqual([]);
    expect((events[0]?.data as { tools: unknown[] }).tools).toEqual([]);
    for (const event of events) expect(validators.agentEvent(event), JSON.stringify(validators.agentEvent.errors)).toBe(true);
    const prompt = (events.find((e) => e.type === 'model.requested')?.data as { prompt: string }).prompt;
    expect(prompt).toContain('Available tools:\n(none: answer with a final action, or ask a person)');
    expect(fold(events)).toEqual(result.envelope);
  });

  it('should end the run TOOL_NOT_ALLOWED, saying it has none, when the model calls a tool anyway', async () => {
    const result = await new AgentExecutor({ runsDir: dir }).execute(desk([answer.tool('refund', { order: 'A-1', amount: 30 })], undefined));
    expect(result).toMatchObject({ success: false, terminateReason: 'error', errorInfo: { code: ErrorCode.TOOL_NOT_ALLOWED, hint: 'the agent has no tools: answer with a final action' } });
  });
});

describe('a tool that requires approval', () => {
  const script = [answer.tool('refund', { order: 'A-1', amount: 30 }, 0.6), answer.final('Refunded 30 EUR.')];

  it('should park the run until a person approves, then make the call once and go on', async () => {
    const first = refunds();
    const executor = new AgentExecutor({ runsDir: dir });
    const waiting = await parked(executor.execute(desk(script, { tools: [first.tool] })));
    expect(waiting.code).toBe(ErrorCode.RUN_WAITING);
    expect(waiting.wait).toMatchObject({ kind: 'approval', tool: 'refund', input: { order: 'A-1', amount: 30 }, timeoutMs: 3_600_000 });
    expect(first.made).toEqual([]);
    // The log alone says the run waits, and for what.
    const log = logOf(waiting.traceId);
    const { events } = await readJsonlLog(log);
    expect((events[0]?.data as { agent: { requiresApproval: string[] } }).agent.requiresApproval).toEqual(['refund']);
    expect(pendingWait(events)).toMatchObject({ kind: 'approval', tool: 'refund' });

    // Another process, later: the definition again, and the approval.
    const second = refunds();
    const run = await new AgentExecutor({ runsDir: dir }).resume(desk(script, { tools: [second.tool] }), { logPath: log, answer: { kind: 'approval', approved: true, reason: 'checked' } });
    const result = await run.result;
    expect(result).toMatchObject({ success: true, output: 'Refunded 30 EUR.', turnCount: 2 });
    expect(second.made).toEqual([{ order: 'A-1', amount: 30 }]);
    const after = (await readJsonlLog(log)).events;
    expect(after.map((e) => e.type)).toContain('tool.approved');
    expect(fold(after)).toEqual(result.envelope);
    // The wait took its answer: a second one is refused, and nothing is recorded.
    await expect(new AgentExecutor({ runsDir: dir }).resume(desk(script, { tools: [second.tool] }), { logPath: log, answer: { kind: 'approval', approved: true } })).rejects.toMatchObject({
      code: ErrorCode.RUN_ALREADY_FINISHED,
    });
    expect((await readJsonlLog(log)).events).toHaveLength(after.length);
  });

  it('should never make a denied call, and show the model why', async () => {
    const { tool, made } = refunds();
    const denied = [answer.tool('refund', { order: 'A-1', amount: 30 }, 0.6), answer.final('I may not refund it.')];
    const waiting = await parked(new AgentExecutor({ runsDir: dir }).execute(desk(denied, { tools: [tool] })));
    const run = await new AgentExecutor({ runsDir: dir }).resume(desk(denied, { tools: [tool] }), {
      logPath: logOf(waiting.traceId),
      answer: { kind: 'approval', approved: false, reason: 'refunds over 20 EUR need a manager' },
    });
    const result = await run.result;
    expect(result).toMatchObject({ success: true, output: 'I may not refund it.' });
    expect(made).toEqual([]);
    const observation = result.messages.map((m) => m.content).join('\n');
    expect(observation).toContain(ErrorCode.TOOL_DENIED);
    expect(observation).toContain('refunds over 20 EUR need a manager');
  });

  it('should refuse an answer of the other kind before recording anything', async () => {
    const { tool } = refunds();
    const waiting = await parked(new AgentExecutor({ runsDir: dir }).execute(desk(script, { tools: [tool] })));
    const log = logOf(waiting.traceId);
    const before = await readFile(log, 'utf8');
    await expect(
      new AgentExecutor({ runsDir: dir }).resume(desk(script, { tools: [tool] }), { logPath: log, answer: { kind: 'client', result: { ok: true, output: {} } } }),
    ).rejects.toMatchObject({ code: ErrorCode.RUN_NOT_WAITING });
    expect(await readFile(log, 'utf8')).toBe(before);
  });
});

describe('a tool the client runs', () => {
  it('should park the run until the client posts its result, which the model sees next', async () => {
    const script = [answer.tool('ask_user', { question: 'Which order?' }, 0.5), answer.final('Order A-7 it is.')];
    const waiting = await parked(new AgentExecutor({ runsDir: dir }).execute(desk(script, { tools: [askUser] })));
    expect(waiting.wait).toMatchObject({ kind: 'client', tool: 'ask_user', input: { question: 'Which order?' } });
    const { events } = await readJsonlLog(logOf(waiting.traceId));
    expect((events[0]?.data as { tools: unknown[] }).tools).toEqual([
      { name: 'ask_user', description: 'Asks the person using the app', inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] }, executor: 'client' },
    ]);
    const run = await new AgentExecutor({ runsDir: dir }).resume(desk(script, { tools: [askUser] }), {
      logPath: logOf(waiting.traceId),
      answer: { kind: 'client', result: { ok: true, output: { answer: 'A-7' } }, idempotencyKey: waiting.wait.idempotencyKey },
    });
    const result = await run.result;
    expect(result).toMatchObject({ success: true, output: 'Order A-7 it is.' });
    expect(result.messages.map((m) => m.content).join('\n')).toContain('{"answer":"A-7"}');
  });

  it('should wait for the approval, then for the client, when a client tool requires approval', async () => {
    const guarded = defineTool({ ...askUser, requiresApproval: true });
    const script = [answer.tool('ask_user', { question: 'Your card number?' }, 0.5), answer.final('Thanks.')];
    const executor = new AgentExecutor({ runsDir: dir });
    const approval = await parked(executor.execute(desk(script, { tools: [guarded] })));
    expect(approval.wait.kind).toBe('approval');
    const log = logOf(approval.traceId);
    const client = await parked((await executor.resume(desk(script, { tools: [guarded] }), { logPath: log, answer: { kind: 'approval', approved: true } })).result);
    expect(client.wait).toMatchObject({ kind: 'client', tool: 'ask_user' });
    const result = await (await executor.resume(desk(script, { tools: [guarded] }), { logPath: log, answer: { kind: 'client', result: { ok: true, output: 'no' } } })).result;
    expect(result).toMatchObject({ success: true, output: 'Thanks.' });
  });
});
