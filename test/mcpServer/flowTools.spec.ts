import { describe, expect, it } from 'vitest';
import { RedflowError } from '../../src/errors.js';
import { validateFlow, type ResolvedFlow } from '../../src/flows/validateFlow.js';
import { flowTool, runInputOf, toolNameOf } from '../../src/mcpServer/flowTools.js';

/** A valid flow whose trigger has the given config. */
function resolved(trigger: Record<string, unknown>, extra: Record<string, unknown> = {}): ResolvedFlow {
  const validation = validateFlow({
    id: 'f',
    version: 1,
    start: 'in',
    ...extra,
    nodes: [
      { id: 'in', type: 'trigger.input', config: trigger },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react' } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [] } },
      { id: 'echo', type: 'tool.module', config: { module: 'echo.mjs' } },
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'echo' },
    ],
  });
  if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
  return validation.flow;
}

describe('flows as MCP tools', () => {
  it('should name a tool after its flow id, each character a model API refuses made _', () => {
    expect(toolNameOf('order-status')).toBe('order-status');
    expect(toolNameOf('support/order.v2')).toBe('support_order_v2');
  });

  it("should wrap a trigger schema that is not an object's as the tool's `input`, and unwrap the run's input from it", () => {
    const tool = flowTool('numbers', resolved({ inputSchema: { type: 'array', items: { type: 'number' } }, description: 'the numbers to add' }));
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: { input: { description: 'the numbers to add', type: 'array', items: { type: 'number' } } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(runInputOf(tool, { input: [1, 2] })).toEqual([1, 2]);
    expect(() => runInputOf(tool, { input: ['one'] })).toThrow(RedflowError);
  });

  it("should describe a tool by the flow's description, else its name, else its trigger's, else its id", () => {
    expect(flowTool('f', resolved({}, { description: 'Adds numbers.', name: 'Adder' })).description).toBe('Adds numbers.');
    expect(flowTool('f', resolved({}, { name: 'Adder' })).description).toBe('Adder');
    expect(flowTool('f', resolved({ description: 'numbers' })).description).toBe('numbers');
    expect(flowTool('f', resolved({})).description).toBe('Runs the Redflow flow f: a ReAct agent.');
  });
});
