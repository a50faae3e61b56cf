import { toStandardJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../../src/agents/agentDefinition.js';
import { AgentExecutor, type AgentResult } from '../../src/agents/agentExecutor.js';
import { defineTool } from '../../src/agents/agentTool.js';
import type { ToolDefinition } from '../../src/actors/tool.js';

// The types a schema gives a definition: checked by `npm run typecheck` (tsc reads the tests), the
// calls below never made.

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Finds an order by its id',
  inputSchema: z.object({ order: z.string(), quantity: z.number().default(1) }),
  outputSchema: z.object({ status: z.enum(['shipped', 'pending']) }),
  execute: (input) => {
    expectTypeOf(input).toEqualTypeOf<{ order: string; quantity: number }>();
    return { status: 'shipped' }; // a literal keeps its type: it matches the outputSchema's enum
  },
});

describe('the types of an agent definition', () => {
  it('should type a tool\'s input from its schema (its output type: defaults filled in) and its return from its outputSchema', () => {
    expectTypeOf(lookup.execute).parameter(0).toEqualTypeOf<{ order: string; quantity: number }>();
    defineTool({
      name: 'forecast',
      description: 'The weather',
      inputSchema: toStandardJsonSchema(v.object({ city: v.string(), days: v.optional(v.number(), 3) })),
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ city: string; days: number }>();
        return {};
      },
    });
    // @ts-expect-error the outputSchema wants a status
    defineTool({ name: 'status', description: 'd', inputSchema: z.object({}), outputSchema: z.object({ status: z.string() }), execute: () => ({ state: 'x' }) });
    // A JSON Schema gives no type: the input is an object of unknowns.
    defineTool({
      name: 'raw',
      description: 'd',
      inputSchema: { type: 'object' },
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<Record<string, unknown>>();
        return null;
      },
    });
    // A client tool has no execute.
    const ask = defineTool({ name: 'ask_user', description: 'Asks the user', inputSchema: z.object({ question: z.string() }), executor: 'client' });
    expectTypeOf(ask.executor).toEqualTypeOf<'client'>();
  });

  it('should type the result\'s output from outputConfig.schema', () => {
    const reviewer = defineAgent({
      name: 'reviewer',
      description: 'Reviews',
      promptConfig: { systemPrompt: 'Review.' },
      modelConfig: { provider: 'scripted', answers: [] },
      toolConfig: { tools: [lookup] },
      outputConfig: { outputName: 'review', schema: z.object({ verdict: z.enum(['approve', 'revise']), notes: z.array(z.string()).default([]) }) },
    });
    expectTypeOf(reviewer).toEqualTypeOf<AgentDefinition<{ verdict: 'approve' | 'revise'; notes: string[] }>>();
    const executor = new AgentExecutor();
    // Types only: these arrows are never called (a run would start).
    void (() => expectTypeOf(executor.execute(reviewer)).resolves.toEqualTypeOf<AgentResult<{ verdict: 'approve' | 'revise'; notes: string[] }>>());
    // A definition written inline, or checked with `satisfies`, is typed the same.
    const inline = {
      name: 'inline',
      description: 'd',
      promptConfig: { systemPrompt: 's' },
      modelConfig: {},
      outputConfig: { outputName: 'n', schema: z.object({ n: z.number() }) },
    } satisfies AgentDefinition;
    void (() => expectTypeOf(executor.execute(inline)).resolves.toHaveProperty('output').toEqualTypeOf<{ n: number } | undefined>());
    // A plain ToolDefinition fits a definition's tools, as before.
    const plain: ToolDefinition<{ a: number }> = { name: 'add', description: 'd', inputSchema: { type: 'object' }, execute: ({ a }) => a };
    defineAgent({ name: 'a', description: 'd', promptConfig: { systemPrompt: 's' }, modelConfig: {}, toolConfig: { tools: [plain, lookup] } });
  });
});
