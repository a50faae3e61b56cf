import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentActivityEvent } from '../../src/agents/activity.js';
import { activityOfLog } from '../../src/agents/activity.js';
import type { AgentDefinition } from '../../src/agents/agentDefinition.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import type { ToolDefinition } from '../../src/actors/tool.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { ErrorCode } from '../../src/errors.js';
import { fold } from '../../src/events/evolve.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { createMemoryEventStore } from '../../src/events/memoryEventStore.js';
import { createSequentialIds } from '../../src/runtime/ids.js';
import { answer } from '../support/harness.js';

// AgentExecutor runs an AgentDefinition through the flow runtime: its log is a real JSONL file,
// replayed with the same fold and resumed after a cut, and its result says how it ended.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-agents-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function lookup() {
  const calls: unknown[] = [];
  const tool: ToolDefinition<{ order: string }> = {
    name: 'lookup_order',
    description: 'Finds an order by its id',
    inputSchema: { type: 'object', required: ['order'], properties: { order: { type: 'string' } } },
    execute: ({ order }) => {
      calls.push(order);
      if (order === 'Z-9') throw new Error('no order Z-9');
      return { order, status: 'shipped' };
    },
  };
  return { tool, calls };
}

function orderAgent(answers: readonly unknown[], extra: Partial<AgentDefinition> = {}): { definition: AgentDefinition; calls: unknown[] } {
  const { tool, calls } = lookup();
  return {
    calls,
    definition: {
      name: 'order-desk',
      description: 'Answers questions about orders',
      promptConfig: { systemPrompt: 'You answer ${customer} about their orders.', query: 'Where is order ${order}?' },
      modelConfig: { provider: 'scripted', answers: [...answers] },
      runConfig: { maxTurns: 3 },
      toolConfig: { tools: [tool] },
      inputConfig: { inputs: { customer: { type: 'string' }, order: { type: 'string' } } },
      ...extra,
    },
  };
}

const inputs = { customer: 'Ada', order: 'A-1' };

describe('AgentExecutor', () => {
  it('should run a definition to its answer through a logged run, with its prompts filled in from the inputs', async () => {
    const { definition, calls } = orderAgent([answer.tool('lookup_order', { order: 'A-1' }, 0.6), answer.final('Order A-1 has shipped.')]);
    const executor = new AgentExecutor({ runsDir: dir, ids: createSequentialIds('agent') });
    const result = await executor.execute(definition, { inputs });
    expect(result).toMatchObject({ success: true, output: 'Order A-1 has shipped.', rawContent: 'Order A-1 has shipped.', terminateReason: 'goal', turnCount: 2 });
    expect(result.error).toBeUndefined();
    expect(calls).toEqual(['A-1']);
    expect(result.logPath).toBe(path.join(dir, `${result.traceId}.jsonl`));
    // The log is the run: the same fold gives the same envelope, and it names the definition.
    const { events, problems } = await readJsonlLog(result.logPath as string);
    expect(problems).toEqual([]);
    expect(fold(events)).toEqual(result.envelope);
    const started = events[0];
    expect(started?.type).toBe('run.started');
    expect(started?.data).toMatchObject({ input: 'Where is order A-1?', agent: { maxIterations: 3, allowedTools: ['lookup_order'] }, flow: { id: 'order-desk' } });
    expect((started?.data as { agent: { instructions: string } }).agent.instructions).toContain('You answer Ada about their orders.');
    // The conversation: the system prompt, the task, the call and its observation, the final answer.
    expect(result.messages[0]?.role).toBe('system');
    expect(result.messages.map((m) => m.content).join('\n')).toContain('Where is order A-1?');
    expect(JSON.parse(result.messages[result.messages.length - 1]?.content ?? '{}')).toMatchObject({ action: 'final', message: 'Order A-1 has shipped.' });
  });

  it('should give the same activity to onActivity and to a reader of the run, and rebuild it from the log less the chunks', async () => {
    const { definition } = orderAgent([answer.tool('lookup_order', { order: 'A-1' }, 0.6), answer.final('Shipped.')]);
    const seen: AgentActivityEvent[] = [];
    const run = await new AgentExecutor({ runsDir: dir }).start(definition, { inputs, onActivity: (a) => seen.push(a) });
    const read: AgentActivityEvent[] = [];
    for await (const activity of run) read.push(activity);
    const result = await run.result;
    expect(read).toEqual(seen);
    expect(seen.map((a) => a.type)).toEqual([
      // A tool call streams no text; the final answer streams its message.
      'turn_start', 'tool_call_start', 'tool_call_end', 'turn_end',
      'turn_start', 'content_chunk', 'turn_end',
    ]);
    expect(seen.find((a) => a.type === 'content_chunk')).toMatchObject({ turnNumber: 2, content: 'Shipped.' });
    expect(seen.find((a) => a.type === 'tool_call_end')).toMatchObject({ ok: true, result: '{"order":"A-1","status":"shipped"}' });
    const { events } = await readJsonlLog(result.logPath as string);
    expect(activityOfLog(events)).toEqual(seen.filter((a) => a.type !== 'content_chunk'));
    // A second reader, after the end, still gets everything from the start.
    const again: AgentActivityEvent[] = [];
    for await (const activity of run) again.push(activity);
    expect(again).toEqual(seen);
  });

  it('should capture a failing tool as its call\'s end and go on; end with one error, last, when the model\'s answer is invalid', async () => {
    const { definition } = orderAgent([answer.tool('lookup_order', { order: 'Z-9' }, 0.6), '{"action":']);
    const seen: AgentActivityEvent[] = [];
    const result = await new AgentExecutor({ runsDir: dir }).execute(definition, { inputs, onActivity: (a) => seen.push(a) });
    expect(result).toMatchObject({ success: false, terminateReason: 'error', errorInfo: { code: ErrorCode.INVALID_JSON }, turnCount: 2 });
    expect(result.error).toBeDefined();
    expect(seen.find((a) => a.type === 'tool_call_end')).toMatchObject({ ok: false, result: expect.stringContaining('no order Z-9') });
    const last = seen[seen.length - 1];
    expect(last?.type).toBe('error');
    expect(last?.type === 'error' && last.error.code).toBe(ErrorCode.INVALID_JSON);
    expect(seen.filter((a) => a.type === 'error')).toHaveLength(1);
  });

  it('should stop at maxTurns with terminateReason max_turns', async () => {
    const { definition } = orderAgent([answer.tool('lookup_order', { order: 'A-1' }), answer.tool('lookup_order', { order: 'A-1' }), answer.tool('lookup_order', { order: 'A-1' })]);
    const result = await new AgentExecutor({ runsDir: dir }).execute(definition, { inputs });
    expect(result).toMatchObject({ success: false, terminateReason: 'max_turns', turnCount: 3, errorInfo: { code: ErrorCode.ITERATION_OVERFLOW } });
  });

  it('should end aborted when its signal aborts, and timeout past runConfig.timeoutMs', async () => {
    const slow = (ms: number): ToolDefinition => ({
      name: 'lookup_order',
      description: 'slow',
      inputSchema: { type: 'object' },
      execute: (_input, { signal }) => new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, ms, {});
        signal.addEventListener('abort', () => { clearTimeout(timer); reject(new Error('stopped')); });
      }),
    });
    const { definition } = orderAgent([answer.tool('lookup_order', { order: 'A-1' }), answer.final('late')], {});
    const controller = new AbortController();
    const aborted = new AgentExecutor({ runsDir: dir }).execute({ ...definition, toolConfig: { tools: [slow(10_000)] } }, { inputs, signal: controller.signal });
    setTimeout(() => controller.abort('the user left'), 50);
    expect(await aborted).toMatchObject({ success: false, terminateReason: 'aborted', errorInfo: { code: ErrorCode.RUN_ABORTED } });
    const timedOut = await new AgentExecutor({ runsDir: dir }).execute({ ...definition, runConfig: { timeoutMs: 50 }, toolConfig: { tools: [slow(10_000)] } }, { inputs });
    expect(timedOut).toMatchObject({ success: false, terminateReason: 'timeout', errorInfo: { code: ErrorCode.RUN_TIMEOUT } });
  });

  it('should parse and check a structured output, and keep the raw answer with AGENT_OUTPUT_INVALID when it does not match', async () => {
    interface Status { order: string; shipped: boolean }
    const outputConfig = { outputName: 'status', schema: { type: 'object', required: ['order', 'shipped'], properties: { order: { type: 'string' }, shipped: { type: 'boolean' } } } };
    const good = orderAgent([answer.final('{"order":"A-1","shipped":true}')], { outputConfig }).definition as AgentDefinition<Status>;
    const result = await new AgentExecutor({ runsDir: dir }).execute(good, { inputs });
    expect(result.success).toBe(true);
    expect(result.output).toEqual({ order: 'A-1', shipped: true });
    // The schema is the agent's outputSchema: the run checks the output, the model is shown the schema.
    const logged = (await readJsonlLog(result.logPath as string)).events;
    expect((logged[0]?.data as { agent: { outputSchema: unknown } }).agent.outputSchema).toEqual(outputConfig.schema);
    expect((logged.find((e) => e.type === 'model.requested')?.data as { prompt: string }).prompt).toContain('"required":["order","shipped"]');

    const bad = orderAgent([answer.final('{"order":"A-1"}')], { outputConfig }).definition;
    const invalid = await new AgentExecutor({ runsDir: dir }).execute(bad, { inputs });
    expect(invalid).toMatchObject({ success: false, terminateReason: 'goal', rawContent: '{"order":"A-1"}', errorInfo: { code: ErrorCode.AGENT_OUTPUT_INVALID } });
    expect(invalid.output).toBeUndefined();
    const prose = await new AgentExecutor({ runsDir: dir }).execute(orderAgent([answer.final('It shipped.')], { outputConfig }).definition, { inputs });
    expect(prose).toMatchObject({ success: false, rawContent: 'It shipped.', errorInfo: { code: ErrorCode.AGENT_OUTPUT_INVALID } });

    // repair: the output that does not match goes back to the model once, with what is wrong with it.
    const repaired = await new AgentExecutor({ runsDir: dir }).execute(
      orderAgent([answer.final('{"order":"A-1"}'), answer.final('{"order":"A-1","shipped":true}')], { outputConfig: { ...outputConfig, repair: true } }).definition,
      { inputs },
    );
    expect(repaired).toMatchObject({ success: true, output: { order: 'A-1', shipped: true }, turnCount: 2 });

    // parse makes the typed value (a class here, as a Zod schema's parse would), or refuses it.
    class Shipped {
      constructor(readonly order: string) {}
    }
    const parse = (value: unknown) => {
      const status = value as Status;
      if (!status.shipped) throw new Error('not shipped yet');
      return new Shipped(status.order);
    };
    const typed = await new AgentExecutor({ runsDir: dir }).execute(orderAgent([answer.final('{"order":"A-1","shipped":true}')], { outputConfig: { ...outputConfig, parse } }).definition as AgentDefinition<Shipped>, { inputs });
    expect(typed.output).toBeInstanceOf(Shipped);
    const refused = await new AgentExecutor({ runsDir: dir }).execute(orderAgent([answer.final('{"order":"A-1","shipped":false}')], { outputConfig: { ...outputConfig, parse } }).definition, { inputs });
    expect(refused).toMatchObject({ success: false, errorInfo: { code: ErrorCode.AGENT_OUTPUT_INVALID, message: expect.stringContaining('not shipped yet') } });
  });

  it('should refuse bad inputs and missing variables before anything is recorded', async () => {
    const { definition } = orderAgent([answer.final('x')]);
    const executor = new AgentExecutor({ runsDir: dir });
    await expect(executor.execute(definition, { inputs: { customer: 'Ada' } })).rejects.toMatchObject({ code: ErrorCode.AGENT_INPUT_INVALID });
    const undeclared = { ...definition, inputConfig: undefined };
    await expect(executor.execute(undeclared, { inputs: { customer: 'Ada' } })).rejects.toMatchObject({ code: ErrorCode.TEMPLATE_VARIABLE_MISSING });
    await expect(executor.execute({ ...definition, runConfig: { maxTurns: 0 } }, { inputs })).rejects.toMatchObject({ code: ErrorCode.AGENT_DEFINITION_INVALID });
    expect(await readdir(dir)).toEqual([]);
  });

  it('should resume a run cut off after any event to the outcome the whole run reached, calling the tool once', async () => {
    const answers = [answer.tool('lookup_order', { order: 'A-1' }, 0.6), answer.final('Order A-1 has shipped.')];
    const whole = await new AgentExecutor({ runsDir: dir }).execute(orderAgent(answers).definition, { inputs });
    const log = await readFile(whole.logPath as string, 'utf8');
    const lines = log.trimEnd().split('\n');
    for (let keep = 1; keep < lines.length; keep += 1) {
      const cut = path.join(dir, `cut-${keep}.jsonl`);
      await writeFile(cut, `${lines.slice(0, keep).join('\n')}\n`);
      const { definition, calls } = orderAgent(answers);
      const seen: AgentActivityEvent[] = [];
      const resumed = await new AgentExecutor({ runsDir: dir }).resume(definition, { logPath: cut, onActivity: (a) => seen.push(a) });
      const result = await resumed.result;
      expect(result.outcome).toEqual(whole.outcome);
      expect(result.output).toBe('Order A-1 has shipped.');
      // The call is made again only when its completion was not logged.
      const completed = lines.slice(0, keep).some((l) => l.includes('"tool.completed"'));
      expect(calls).toEqual(completed ? [] : ['A-1']);
      // The resumed activity closes every turn it opens, or that was open when the log was cut.
      expect(seen.filter((a) => a.type === 'turn_end').length).toBeGreaterThanOrEqual(seen.filter((a) => a.type === 'turn_start').length);
    }
  });

  it('should put the model\'s questions to onQuestion and go on with the answer, or end escalated when none comes', async () => {
    const ask = { action: 'escalate', input: { reason: 'a refund over my limit', question: 'May I refund 120 EUR?' } };
    const asked: unknown[] = [];
    const seen: AgentActivityEvent[] = [];
    const { definition } = orderAgent([ask, answer.final('Refunded 120 EUR.')]);
    const answered = await new AgentExecutor({ runsDir: dir }).execute(definition, {
      inputs,
      onQuestion: (question) => {
        asked.push(question);
        return 'Yes, refund it.';
      },
      onActivity: (a) => seen.push(a),
    });
    expect(asked).toEqual([{ action: 'escalate', question: 'May I refund 120 EUR?', reason: 'a refund over my limit' }]);
    expect(answered).toMatchObject({ success: true, output: 'Refunded 120 EUR.', turnCount: 2 });
    expect(seen.map((a) => a.type).filter((t) => t !== 'content_chunk')).toEqual(['turn_start', 'turn_end', 'turn_start', 'turn_end']);
    expect(JSON.stringify(answered.messages)).toContain('Yes, refund it.');

    // No answer from onQuestion ends the run (without onQuestion it parks: agentQuestions.spec.ts).
    const unanswered = await new AgentExecutor({ runsDir: dir }).execute(orderAgent([ask]).definition, { inputs, onQuestion: () => undefined });
    expect(unanswered).toMatchObject({ success: false, terminateReason: 'escalated', errorInfo: { code: ErrorCode.HUMAN_ANSWER_MISSING }, turnCount: 1 });
    const info = await new AgentExecutor({ runsDir: dir }).execute(orderAgent([{ action: 'request_info', input: { question: 'Which order?' } }]).definition, {
      inputs,
      onQuestion: () => undefined,
    });
    expect(info).toMatchObject({ success: false, terminateReason: 'info_requested' });
    // The whole run, question and answer, is one log a replay folds.
    const { events } = await readJsonlLog(answered.logPath as string);
    expect(fold(events)).toEqual(answered.envelope);
  });

  it('should keep the log in a store it is given, and resume from that store', async () => {
    const store = createMemoryEventStore();
    const answers = [answer.tool('lookup_order', { order: 'A-1' }, 0.6), answer.final('Done.')];
    const executor = new AgentExecutor({ model: createScriptedModel(answers) });
    const result = await executor.execute(orderAgent([]).definition, { inputs, store });
    expect(result.logPath).toBeUndefined();
    expect((await store.read(result.traceId)).events.length).toBeGreaterThan(4);
    const again = await (await executor.resume(orderAgent([]).definition, { store, traceId: result.traceId })).result;
    expect(again.outcome).toEqual(result.outcome);
  });

  it('should not let a throwing onActivity or onEvent stop the run', async () => {
    const { definition } = orderAgent([answer.final('fine')]);
    const result = await new AgentExecutor({ runsDir: dir }).execute(definition, {
      inputs,
      onActivity: () => {
        throw new Error('a broken view');
      },
      onEvent: () => {
        throw new Error('a broken listener');
      },
    });
    expect(result).toMatchObject({ success: true, output: 'fine' });
  });
});
