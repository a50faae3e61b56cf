import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { AgentRegistry, agentRegistry } from '../../src/agents/agentRegistry.js';
import type { AgentDefinition } from '../../src/agents/agentDefinition.js';
import { ErrorCode } from '../../src/errors.js';
import type { ToolDefinition } from '../../src/actors/tool.js';

const noop: ToolDefinition = { name: 'noop', description: 'does nothing', inputSchema: { type: 'object' }, execute: () => null };

function agent(name: string): AgentDefinition {
  return { name, description: `agent ${name}`, promptConfig: { systemPrompt: 'Help.' }, modelConfig: { provider: 'scripted', answers: [] }, toolConfig: { tools: [noop] } };
}

describe('AgentRegistry', () => {
  it('should register, get, list and unregister agents by name', () => {
    const registry = new AgentRegistry();
    registry.register(agent('a'));
    registry.register(agent('b'));
    expect(registry.get('a')?.name).toBe('a');
    expect(registry.get('zzz')).toBeUndefined();
    expect(registry.getAll().map((d) => d.name)).toEqual(['a', 'b']);
    expect(registry.unregister('a')).toBe(true);
    expect(registry.unregister('a')).toBe(false);
    expect(registry.has('a')).toBe(false);
    registry.register(agent('a'));
    expect(registry.getAll().map((d) => d.name)).toEqual(['b', 'a']);
  });

  it('should refuse a second agent of one name with AGENT_ALREADY_REGISTERED, keeping the first', () => {
    const registry = new AgentRegistry();
    const first = agent('reviewer');
    registry.register(first);
    expect(() => registry.register({ ...agent('reviewer'), description: 'another' })).toThrow(expect.objectContaining({ code: ErrorCode.AGENT_ALREADY_REGISTERED }));
    expect(registry.get('reviewer')).toBe(first);
  });

  it('should check a definition when it is registered, not at its first run', () => {
    const registry = new AgentRegistry();
    expect(() => registry.register({ ...agent('x'), promptConfig: { systemPrompt: '' } })).toThrow(expect.objectContaining({ code: ErrorCode.AGENT_DEFINITION_INVALID }));
    expect(registry.getAll()).toEqual([]);
  });

  it('should look an agent up in the same time among 20,000 as among 10', () => {
    const lookupTime = (count: number) => {
      const registry = new AgentRegistry();
      for (let i = 0; i < count; i += 1) registry.register(agent(`agent-${i}`));
      const names = Array.from({ length: 1000 }, (_, i) => `agent-${(i * 7919) % count}`);
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 7; round += 1) {
        const start = performance.now();
        for (let k = 0; k < 50; k += 1) for (const name of names) if (registry.get(name) === undefined) throw new Error(name);
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    const small = lookupTime(10);
    const large = lookupTime(20_000);
    // A lookup that scanned the agents would take ~2,000 times longer with 2,000 times as many.
    expect(large).toBeLessThan(small * 20 + 5);
  });

  it('should share one registry in the application', () => {
    expect(agentRegistry).toBeInstanceOf(AgentRegistry);
  });
});
