// What runs sharing a tool list share: the system prompt and the answer rules are built once for
// one tool list and agent settings, and built again for other settings, never stale.
import { describe, expect, it } from 'vitest';
import type { AgentCoreReactConfig, ToolSpec } from '../../src/contracts/schema-types.js';
import { systemPromptFor } from '../../src/machines/prompt.js';
import { answerRulesFor } from '../../src/runtime/answerRules.js';
import { validateModelAnswer } from '../../src/validation/validateModelAnswer.js';

const tools: ToolSpec[] = [{ name: 'add', description: 'Adds', inputSchema: { type: 'object', required: ['a'], properties: { a: { type: 'number' } } } }];
const agent: AgentCoreReactConfig = { strategy: 'react', maxIterations: 3, allowedTools: ['add'] };

describe('settings shared by the runs of one tool list', () => {
  it('should give runs with the same tool list and agent settings one prompt and one set of rules', () => {
    expect(systemPromptFor(tools, { ...agent })).toBe(systemPromptFor(tools, { ...agent }));
    expect(answerRulesFor({ ...agent }, tools)).toBe(answerRulesFor({ ...agent }, tools));
  });

  it('should share the rules of agent configs made per run whose allowed tools are the same names', () => {
    const perRun = () => ({ ...agent, allowedTools: ['add'] });
    expect(answerRulesFor(perRun(), tools)).toBe(answerRulesFor(perRun(), tools));
    expect(answerRulesFor({ ...agent, allowedTools: ['add', 'add'] }, tools)).not.toBe(answerRulesFor(perRun(), tools));
  });

  it('should build the prompt again when the instructions, the reasoning or the output schema change', () => {
    const plain = systemPromptFor(tools, agent);
    const instructed = systemPromptFor(tools, { ...agent, instructions: 'Be brief.' });
    expect(instructed).toContain('Be brief.');
    expect(systemPromptFor(tools, { ...agent, reasoning: 'explicit' })).toContain('"thought"');
    expect(systemPromptFor(tools, { ...agent, outputSchema: { type: 'object' } })).toContain('Final output');
    expect(systemPromptFor(tools, agent)).toBe(plain);
    expect(systemPromptFor([...tools, { name: 'sub', description: 'Subtracts', inputSchema: { type: 'object' } }], agent)).toContain('- sub: Subtracts');
  });

  it('should build the rules again when the allowed tools, the output schema or the text form change', () => {
    const call = JSON.stringify({ action: 'tool', tool: 'add', input: { a: 1 }, confidence: 0.5 });
    expect(validateModelAnswer(call, answerRulesFor(agent, tools)).ok).toBe(true);
    expect(validateModelAnswer(call, answerRulesFor({ ...agent, allowedTools: [] }, tools)).ok).toBe(false);
    const final = JSON.stringify({ action: 'final', message: 'done', confidence: 1, output: 'not a number' });
    // The output schema's verdict: the text output is refused, a number taken.
    const numeric = answerRulesFor({ ...agent, outputSchema: { type: 'number' } }, tools);
    expect(numeric.outputCheck?.('not a number')).toEqual([expect.any(String)]);
    expect(numeric.outputCheck?.(42)).toBe(true);
    expect(validateModelAnswer(final, answerRulesFor(agent, tools)).ok).toBe(true);
    const textActions = { enabled: true } as unknown as Parameters<typeof answerRulesFor>[3];
    expect(answerRulesFor(agent, tools, undefined, textActions).textActions).toBe(textActions);
    expect(answerRulesFor(agent, tools).textActions).toBeUndefined();
  });
});
