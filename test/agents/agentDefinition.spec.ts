import { describe, expect, it } from 'vitest';
import { checkAgentDefinition, checkAgentInputs, type AgentDefinition } from '../../src/agents/agentDefinition.js';
import { ErrorCode, RedflowError } from '../../src/errors.js';
import type { ToolDefinition } from '../../src/actors/tool.js';

const add: ToolDefinition<{ a: number; b: number }> = {
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'number' }, b: { type: 'number' } } },
  execute: ({ a, b }) => ({ sum: a + b }),
};

const valid: AgentDefinition = {
  name: 'adder',
  description: 'Adds numbers for ${person}',
  promptConfig: { systemPrompt: 'You add numbers for ${person}.', query: 'What is ${a} + ${b}?' },
  modelConfig: { provider: 'scripted', answers: [] },
  runConfig: { maxTurns: 3, timeoutMs: 10_000 },
  toolConfig: { tools: [add] },
  inputConfig: { inputs: { person: { type: 'string' }, a: { type: 'number' }, b: { type: 'number' } } },
  outputConfig: { outputName: 'sum', schema: { type: 'object', required: ['sum'] } },
};

/** The error `checkAgentDefinition` throws for `value`. */
function refusal(value: unknown): RedflowError {
  try {
    checkAgentDefinition(value);
  } catch (error) {
    if (error instanceof RedflowError) return error;
    throw error;
  }
  throw new Error('the definition was accepted');
}

describe('checkAgentDefinition', () => {
  it('should accept a complete definition, and one with only the required fields and a tool', () => {
    expect(() => checkAgentDefinition(valid)).not.toThrow();
    expect(() =>
      checkAgentDefinition({ name: 'a', description: 'd', promptConfig: { systemPrompt: 's' }, modelConfig: {}, toolConfig: { tools: [add] } }),
    ).not.toThrow();
  });

  it.each([
    ['not an object', 42, '(root)'],
    ['a name with a space', { ...valid, name: 'my agent' }, 'name'],
    ['no description', { ...valid, description: '' }, 'description'],
    ['no system prompt', { ...valid, promptConfig: { query: 'x' } }, 'promptConfig.systemPrompt'],
    ['a query that is not text', { ...valid, promptConfig: { systemPrompt: 's', query: 3 } }, 'promptConfig.query'],
    ['an initial message of another role', { ...valid, promptConfig: { systemPrompt: 's', initialMessages: [{ role: 'system', content: 'x' }] } }, 'promptConfig.initialMessages[0]'],
    ['a model setting of the wrong type', { ...valid, modelConfig: { temperature: 'hot' } }, 'modelConfig'],
    ['too many turns', { ...valid, runConfig: { maxTurns: 21 } }, 'runConfig.maxTurns'],
    ['a negative timeout', { ...valid, runConfig: { timeoutMs: -1 } }, 'runConfig.timeoutMs'],
    ['tools that are not an array', { ...valid, toolConfig: { tools: add } }, 'toolConfig.tools'],
    ['a client tool with execute', { ...valid, toolConfig: { tools: [{ ...add, executor: 'client' }] } }, 'toolConfig.tools[0].execute'],
    ['a client tool with an outputSchema', { ...valid, toolConfig: { tools: [{ name: 'ask', description: 'd', inputSchema: {}, executor: 'client', outputSchema: {} }] } }, 'toolConfig.tools[0].outputSchema'],
    ['an executor other than the client', { ...valid, toolConfig: { tools: [{ ...add, executor: 'server' }] } }, 'toolConfig.tools[0].executor'],
    ['requiresApproval that is not a boolean', { ...valid, toolConfig: { tools: [{ ...add, requiresApproval: 'yes' }] } }, 'toolConfig.tools[0].requiresApproval'],
    ['a tool outputSchema that is not a schema', { ...valid, toolConfig: { tools: [{ ...add, outputSchema: 'number' }] } }, 'toolConfig.tools[0].outputSchema'],
    ['a wait timeout over 30 days', { ...valid, runConfig: { waitTimeoutMs: 2_592_000_001 } }, 'runConfig.waitTimeoutMs'],
    ['a tool without execute', { ...valid, toolConfig: { tools: [{ ...add, execute: 'run' }] } }, 'toolConfig.tools[0].execute'],
    ['two tools of one name', { ...valid, toolConfig: { tools: [add, add] } }, 'toolConfig.tools[1].name'],
    ['a tool schema that is not JSON Schema', { ...valid, toolConfig: { tools: [{ ...add, inputSchema: { type: 'number-ish' } }] } }, 'toolConfig.tools[0].inputSchema'],
    ['an input of an unknown type', { ...valid, inputConfig: { inputs: { ...valid.inputConfig?.inputs, a: { type: 'float' } } } }, 'inputConfig.inputs.a.type'],
    ['an input name that cannot be a variable', { ...valid, inputConfig: { inputs: { ...valid.inputConfig?.inputs, 'the-file': { type: 'string' } } } }, 'inputConfig.inputs.the-file'],
    ['an output schema that is not an object', { ...valid, outputConfig: { outputName: 'sum', schema: 'object' } }, 'outputConfig.schema'],
    ['a prompt variable that is not a declared input', { ...valid, promptConfig: { systemPrompt: 'Help ${someone}.' } }, 'promptConfig'],
  ])('should refuse %s with AGENT_DEFINITION_INVALID at the field', (_what, value, where) => {
    const error = refusal(value);
    expect(error.code).toBe(ErrorCode.AGENT_DEFINITION_INVALID);
    expect(error.message).toContain(where);
    expect(error.hint).toBeDefined();
  });

  it('should accept an agent without tools (it answers directly), and tools that wait: one requiring approval, one the client runs', () => {
    expect(() => checkAgentDefinition({ ...valid, toolConfig: undefined })).not.toThrow();
    expect(() => checkAgentDefinition({ ...valid, toolConfig: { tools: [] } })).not.toThrow();
    const ask = { name: 'ask_user', description: 'Asks the user', inputSchema: { type: 'object' }, executor: 'client' };
    expect(() => checkAgentDefinition({ ...valid, runConfig: { waitTimeoutMs: 60_000 }, toolConfig: { tools: [{ ...add, requiresApproval: true }, ask] } })).not.toThrow();
  });

  it('should list every problem at once, not only the first', () => {
    const error = refusal({ ...valid, name: '', description: 3, runConfig: { maxTurns: 0 } });
    expect(error.message).toContain('name');
    expect(error.message).toContain('description');
    expect(error.message).toContain('runConfig.maxTurns');
    expect(error.path).toBe('name');
  });
});

describe('checkAgentInputs', () => {
  it('should accept inputs that match inputConfig, an optional one left out', () => {
    const definition = { ...valid, inputConfig: { inputs: { ...valid.inputConfig?.inputs, note: { type: 'string' as const, required: false } } } };
    expect(() => checkAgentInputs(definition, { person: 'Ada', a: 2, b: 3 })).not.toThrow();
  });

  it.each([
    ['a required input missing', { person: 'Ada', a: 2 }],
    ['an input of the wrong type', { person: 'Ada', a: 2, b: 'three' }],
    ['an input not declared (a typo)', { person: 'Ada', a: 2, b: 3, c: 4 }],
    ['inputs that are not an object', 'Ada'],
  ])('should refuse %s with AGENT_INPUT_INVALID', (_what, inputs) => {
    expect(() => checkAgentInputs(valid, inputs)).toThrow(expect.objectContaining({ code: ErrorCode.AGENT_INPUT_INVALID }));
  });

  it('should take any inputs when the definition declares none', () => {
    expect(() => checkAgentInputs({ ...valid, inputConfig: undefined }, { anything: [1, 2] })).not.toThrow();
  });
});
