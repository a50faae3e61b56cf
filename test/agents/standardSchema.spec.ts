import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { toJsonSchema, toStandardJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/agentDefinition.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import { defineTool, type DefinitionTool } from '../../src/agents/agentTool.js';
import { withJsonSchema } from '../../src/agents/schemaToJson.js';
import { validators } from '../../src/contracts/schemas.js';
import { ErrorCode, type RedflowError } from '../../src/errors.js';
import { fold } from '../../src/events/evolve.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { answer } from '../support/harness.js';

// Agent definitions take Standard Schemas (real zod 4 and valibot schemas here) for a tool's input
// and output and for the agent's output: the model is shown their JSON Schema, the log holds it as
// plain JSON, and the schema itself checks every value, a resumed run's too.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-standard-schema-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A zod tool that records what its `execute` receives: orders start with `A-`, a refinement JSON Schema cannot say. */
function zodLookup() {
  const received: { order: string; quantity: number }[] = [];
  const tool = defineTool({
    name: 'lookup_order',
    description: 'Finds an order by its id',
    inputSchema: z.object({
      order: z.string().refine((id) => id.startsWith('A-'), 'orders start with A-'),
      quantity: z.number().int().default(1),
    }),
    execute: (input) => {
      received.push(input);
      return { order: input.order, status: 'shipped', quantity: input.quantity };
    },
  });
  return { tool, received };
}

function agentWith(tools: readonly DefinitionTool[], answers: readonly unknown[], extra: Partial<AgentDefinition> = {}): AgentDefinition {
  return {
    name: 'order-desk',
    description: 'Answers questions about orders',
    promptConfig: { systemPrompt: 'You answer customers about their orders.', query: 'Where is my order?' },
    modelConfig: { provider: 'scripted', answers: [...answers] },
    runConfig: { maxTurns: 4 },
    toolConfig: { tools },
    ...extra,
  };
}

/** The observation the model was shown for the call of `iteration` (the tool's output or error, as logged). */
async function completion(logPath: string, iteration: number) {
  const { events } = await readJsonlLog(logPath);
  const data = events.find((event) => event.type === 'tool.completed' && event.iteration === iteration)?.data as
    | { ok: true; output: unknown }
    | { ok: false; error: { code: string; message: string } }
    | undefined;
  if (data === undefined) return undefined;
  return data.ok ? { ok: true, output: data.output } : { ok: false, error: data.error };
}

describe('Standard Schema tools', () => {
  it('should give execute the input the zod schema parses (a default filled in), and show the model its JSON Schema', async () => {
    const { tool, received } = zodLookup();
    const definition = agentWith([tool], [answer.tool('lookup_order', { order: 'A-1' }, 0.6), answer.final('Shipped.')]);
    const result = await new AgentExecutor({ runsDir: dir }).execute(definition);
    expect(result).toMatchObject({ success: true, output: 'Shipped.' });
    expect(received).toEqual([{ order: 'A-1', quantity: 1 }]);
    const { events, problems } = await readJsonlLog(result.logPath as string);
    expect(problems).toEqual([]);
    // The log holds the tool's JSON Schema as plain JSON (the input side: quantity has a default, so it is not required).
    const started = events[0]?.data as { tools: { inputSchema: Record<string, unknown> }[] };
    expect(started.tools[0]?.inputSchema).toEqual({
      type: 'object',
      properties: { order: { type: 'string' }, quantity: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, default: 1 } },
      required: ['order'],
    });
    for (const event of events) expect(validators.agentEvent(event), JSON.stringify(validators.agentEvent.errors)).toBe(true);
    expect((events.find((e) => e.type === 'model.requested')?.data as { prompt: string }).prompt).toContain('"required":["order"]');
    expect(fold(events)).toEqual(result.envelope);
  });

  it('should refuse an input the schema refuses as the call\'s failure, with the schema\'s message and path, which the model sees and corrects', async () => {
    const { tool, received } = zodLookup();
    const definition = agentWith([tool], [answer.tool('lookup_order', { order: 'Z-9' }, 0.6), answer.tool('lookup_order', { order: 'A-2', quantity: 3 }, 0.6), answer.final('Done.')]);
    const result = await new AgentExecutor({ runsDir: dir }).execute(definition);
    expect(result).toMatchObject({ success: true, turnCount: 3 });
    expect(received).toEqual([{ order: 'A-2', quantity: 3 }]);
    const refused = await completion(result.logPath as string, 1);
    expect(refused).toMatchObject({ ok: false, error: { code: ErrorCode.TOOL_INPUT_INVALID, message: 'the input for "lookup_order" does not match its schema: /order: orders start with A-' } });
    // The refusal is the observation of the next model call.
    expect(result.messages.map((m) => m.content).join('\n')).toContain('/order: orders start with A-');
  });

  it('should check with an async refinement (validate answering with a promise)', async () => {
    const known = new Set(['A-1']);
    const received: string[] = [];
    const tool = defineTool({
      name: 'lookup_order',
      description: 'Finds an order by its id',
      inputSchema: z.object({ order: z.string().refine(async (id) => { await new Promise((resolve) => setTimeout(resolve, 5)); return known.has(id); }, 'no such order') }),
      execute: ({ order }) => {
        received.push(order);
        return { order };
      },
    });
    const result = await new AgentExecutor({ runsDir: dir }).execute(agentWith([tool], [answer.tool('lookup_order', { order: 'A-7' }), answer.tool('lookup_order', { order: 'A-1' }), answer.final('ok')]));
    expect(result.success).toBe(true);
    expect(received).toEqual(['A-1']);
    expect(await completion(result.logPath as string, 1)).toMatchObject({ ok: false, error: { code: ErrorCode.TOOL_INPUT_INVALID, message: expect.stringContaining('/order: no such order') } });
  });

  it('should leave what the JSON Schema says to the run: an input of the wrong type ends the run TOOL_INPUT_INVALID, as any tool\'s does', async () => {
    const { tool, received } = zodLookup();
    const result = await new AgentExecutor({ runsDir: dir }).execute(agentWith([tool], [answer.tool('lookup_order', { order: 42 })]));
    expect(result).toMatchObject({ success: false, terminateReason: 'error', errorInfo: { code: ErrorCode.TOOL_INPUT_INVALID } });
    expect(received).toEqual([]);
  });

  it('should take a valibot schema given the Standard JSON Schema interface, and refuse with valibot\'s messages', async () => {
    const received: { city: string; days: number }[] = [];
    const city = v.object({ city: v.pipe(v.string(), v.check((name) => /^[A-Z]/.test(name), 'a city name starts with a capital')), days: v.optional(v.number(), 3) });
    const forecast = (inputSchema: DefinitionTool['inputSchema']) =>
      defineTool({
        name: 'forecast',
        description: 'The weather for a city',
        inputSchema: inputSchema as typeof city,
        execute: (input) => {
          received.push(input as { city: string; days: number });
          return { sky: 'clear' };
        },
      });
    // valibot's converter cannot say what a check does: refused when the definition is checked…
    await expect(new AgentExecutor({ runsDir: dir }).execute(agentWith([forecast(toStandardJsonSchema(city))], []))).rejects.toMatchObject({
      code: ErrorCode.AGENT_DEFINITION_INVALID,
      path: 'toolConfig.tools[0].inputSchema',
      message: expect.stringContaining('The "check" action cannot be converted to JSON Schema'),
    });
    // …and runs with the JSON Schema it can write, leaving the check out: valibot checks it.
    const shown = withJsonSchema(city, toJsonSchema(city, { errorMode: 'ignore' }));
    const result = await new AgentExecutor({ runsDir: dir }).execute(agentWith([forecast(shown)], [answer.tool('forecast', { city: 'oslo' }), answer.tool('forecast', { city: 'Oslo' }), answer.final('Clear.')]));
    expect(result.success).toBe(true);
    expect(received).toEqual([{ city: 'Oslo', days: 3 }]);
    expect(await completion(result.logPath as string, 1)).toMatchObject({ ok: false, error: { code: ErrorCode.TOOL_INPUT_INVALID, message: expect.stringContaining('/city: a city name starts with a capital') } });
  });
});

describe('a tool\'s outputSchema', () => {
  const shipment = z.object({ order: z.string(), status: z.enum(['shipped', 'pending']) });

  function statusTool(reply: unknown, outputSchema: z.ZodType | Record<string, unknown> = shipment) {
    return {
      name: 'status',
      description: 'The status of an order',
      inputSchema: z.object({ order: z.string() }),
      outputSchema,
      execute: () => reply,
    } as DefinitionTool;
  }

  it('should give the model a result that matches, and refuse one that does not as the call\'s failure (TOOL_OUTPUT_INVALID), never the run\'s', async () => {
    const passes = await new AgentExecutor({ runsDir: dir }).execute(agentWith([statusTool({ order: 'A-1', status: 'shipped', internal: 'x' })], [answer.tool('status', { order: 'A-1' }), answer.final('Shipped.')]));
    expect(passes.success).toBe(true);
    // zod's object strips what it does not know: the model sees the schema's value.
    expect(await completion(passes.logPath as string, 1)).toEqual({ ok: true, output: { order: 'A-1', status: 'shipped' } });

    const fails = await new AgentExecutor({ runsDir: dir }).execute(agentWith([statusTool({ order: 'A-1', status: 'lost' })], [answer.tool('status', { order: 'A-1' }), answer.final('I could not tell.')]));
    expect(fails).toMatchObject({ success: true, output: 'I could not tell.', turnCount: 2 });
    expect(await completion(fails.logPath as string, 1)).toMatchObject({
      ok: false,
      error: { code: ErrorCode.TOOL_OUTPUT_INVALID, message: expect.stringContaining('/status: Invalid option: expected one of "shipped"|"pending"') },
    });
  });

  it('should check a JSON Schema outputSchema too', async () => {
    const tool = statusTool({ order: 7 }, { type: 'object', required: ['order'], properties: { order: { type: 'string' } } });
    const result = await new AgentExecutor({ runsDir: dir }).execute(agentWith([tool], [answer.tool('status', { order: 'A-1' }), answer.final('?')]));
    expect(await completion(result.logPath as string, 1)).toMatchObject({ ok: false, error: { code: ErrorCode.TOOL_OUTPUT_INVALID, message: expect.stringContaining('/order must be string') } });
  });
});

describe('a Standard Schema outputConfig', () => {
  const review = z.object({
    verdict: z.enum(['approve', 'revise']),
    notes: z.array(z.string()).default([]),
    summary: z.string().refine((text) => !text.includes('TODO'), 'a summary is finished, not TODO'),
  });
  const reviewer = (answers: readonly unknown[], repair = false) =>
    defineAgent({
      name: 'reviewer',
      description: 'Reviews a change',
      promptConfig: { systemPrompt: 'You review changes.' },
      modelConfig: { provider: 'scripted', answers: [...answers] },
      outputConfig: { outputName: 'review', schema: review, repair },
    });
  const final = (output: unknown) => ({ action: 'final', output, confidence: 0.9 });

  it('should give the output as the schema parses it, validated', async () => {
    const result = await new AgentExecutor({ runsDir: dir }).execute(reviewer([final({ verdict: 'approve', summary: 'Fine.' })]));
    expect(result).toMatchObject({ success: true, validated: true, output: { verdict: 'approve', notes: [], summary: 'Fine.' } });
    const { events } = await readJsonlLog(result.logPath as string);
    const agent = (events[0]?.data as { agent: { outputSchema: Record<string, unknown> } }).agent;
    expect(agent.outputSchema).toMatchObject({ type: 'object', required: ['verdict', 'summary'] });
    expect(agent.outputSchema.$schema).toBeUndefined();
  });

  it('should keep an output the schema refuses, unvalidated, with the schema\'s messages and paths, and never fail the run', async () => {
    // What the JSON Schema says (the run checks it) and what only zod can say (checked after).
    for (const [output, why] of [
      [{ verdict: 'maybe', summary: 'Fine.' }, '/verdict must be one of ["approve","revise"]'],
      [{ verdict: 'revise', summary: 'TODO' }, '/summary: a summary is finished, not TODO'],
    ] as const) {
      const result = await new AgentExecutor({ runsDir: dir }).execute(reviewer([final(output)]));
      expect(result).toMatchObject({ success: false, validated: false, terminateReason: 'goal', rawContent: JSON.stringify(output), errorInfo: { code: ErrorCode.AGENT_OUTPUT_INVALID } });
      expect(result.output).toBeUndefined();
      expect(result.error).toContain(why);
    }
  });

  it('should send an output that does not match back to the model once when repair is set', async () => {
    const result = await new AgentExecutor({ runsDir: dir }).execute(reviewer([final({ verdict: 'maybe', summary: 'x' }), final({ verdict: 'revise', summary: 'Rename it.' })], true));
    expect(result).toMatchObject({ success: true, validated: true, turnCount: 2, output: { verdict: 'revise', notes: [], summary: 'Rename it.' } });
    const { events } = await readJsonlLog(result.logPath as string);
    expect(events.map((e) => e.type)).toContain('output.rejected');
  });
});

describe('a schema that cannot be shown to the model', () => {
  it('should be refused when the definition is checked, with where it is and how to give one', async () => {
    const plainValibot = { name: 'forecast', description: 'd', inputSchema: v.object({ city: v.string() }), execute: () => ({}) };
    const error = await new AgentExecutor({ runsDir: dir }).execute(agentWith([plainValibot], [])).then(
      () => undefined,
      (thrown: unknown) => thrown as RedflowError,
    );
    expect(error).toMatchObject({ code: ErrorCode.AGENT_DEFINITION_INVALID, path: 'toolConfig.tools[0].inputSchema' });
    expect(error?.message).toContain('is a valibot schema that cannot describe itself as JSON Schema');
    expect(error?.hint).toContain('toStandardJsonSchema(schema) from @valibot/to-json-schema');

    const dated = agentWith([], [], { outputConfig: { outputName: 'when', schema: z.object({ at: z.date() }) } });
    const dateError = await new AgentExecutor({ runsDir: dir }).execute(dated).then(
      () => undefined,
      (thrown: unknown) => thrown as RedflowError,
    );
    expect(dateError).toMatchObject({ code: ErrorCode.AGENT_DEFINITION_INVALID, path: 'outputConfig.schema' });
    expect(dateError?.message).toContain('Date cannot be represented in JSON Schema');
    expect(dateError?.hint).toContain('withJsonSchema(schema');
  });

  it('should run with a JSON Schema given by hand, the schema still checking and giving the value', async () => {
    const when = withJsonSchema(z.object({ at: z.iso.datetime().transform((text) => new Date(text)) }), {
      type: 'object',
      required: ['at'],
      properties: { at: { type: 'string', format: 'date-time' } },
    });
    const definition = defineAgent({ ...agentWith([], [{ action: 'final', output: { at: '2026-01-02T03:04:05Z' }, confidence: 0.9 }]), outputConfig: { outputName: 'when', schema: when } });
    const result = await new AgentExecutor({ runsDir: dir }).execute(definition);
    expect(result.validated).toBe(true);
    expect(result.output?.at).toEqual(new Date('2026-01-02T03:04:05Z'));
  });
});

describe('a resumed run', () => {
  it('should check calls and the output as the first run did, cut after any event', async () => {
    const output = z.object({ order: z.string(), quantity: z.number() });
    const script = [
      answer.tool('lookup_order', { order: 'Z-9' }, 0.6),
      answer.tool('lookup_order', { order: 'A-2', quantity: 2 }, 0.6),
      { action: 'final', output: { order: 'A-2', quantity: 2 }, confidence: 0.9 },
    ];
    const make = () => {
      const { tool, received } = zodLookup();
      return { definition: defineAgent({ ...agentWith([tool], script), outputConfig: { outputName: 'order', schema: output } }), received };
    };
    const whole = await new AgentExecutor({ runsDir: dir }).execute(make().definition);
    expect(whole).toMatchObject({ success: true, validated: true, output: { order: 'A-2', quantity: 2 } });
    const lines = (await readFile(whole.logPath as string, 'utf8')).trimEnd().split('\n');
    for (let keep = 1; keep < lines.length; keep += 1) {
      const cut = path.join(dir, `cut-${keep}.jsonl`);
      await writeFile(cut, `${lines.slice(0, keep).join('\n')}\n`);
      const { definition, received } = make();
      const resumed = await (await new AgentExecutor({ runsDir: dir }).resume(definition, { logPath: cut })).result;
      expect(resumed.outcome, `cut after ${keep}`).toEqual(whole.outcome);
      expect(resumed.output).toEqual({ order: 'A-2', quantity: 2 });
      // The refusal of Z-9 is the same observation, resumed or not, and A-2 reaches the tool once in all.
      expect(await completion(cut, 1)).toEqual(await completion(whole.logPath as string, 1));
      const completedBefore = lines.slice(0, keep).filter((l) => l.includes('"tool.completed"')).length;
      expect(received, `cut after ${keep}`).toEqual(completedBefore >= 2 ? [] : [{ order: 'A-2', quantity: 2 }]);
    }
  });
});
