import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { CONNECTION_RULES, checkConnection, inferEdgeKind } from '../../src/flows/edgeRules.js';
import { NODE_TYPES, type EdgeKind } from '../../src/flows/nodeTypes.js';

/** The strict edge rules spelled out by node type, independently of CONNECTION_RULES. */
const ALLOWED: ReadonlyArray<readonly [string, string, EdgeKind]> = [
  ['trigger.input', 'agent.core', 'data'],
  ['agent.core', 'model.llm', 'model'],
  ['agent.core', 'tool.http', 'tool'],
  ['agent.core', 'tool.module', 'tool'],
  ['agent.core', 'tool.postgres', 'tool'],
  ['agent.core', 'tool.mcp', 'tool'],
  ['agent.core', 'tool.client', 'tool'],
  ['agent.core', 'tool.flow', 'tool'],
  ['agent.core', 'agent.ref', 'tool'],
  ['agent.core', 'agent.a2a', 'tool'],
  ['agent.core', 'memory.kv', 'memory'],
  ['memory.kv', 'agent.core', 'memory'],
  ['agent.core', 'response.chat', 'data'],
  ['agent.core', 'response.end', 'data'],
];

const allPairs = NODE_TYPES.flatMap((source) => NODE_TYPES.map((target) => [source, target] as const));
const forbiddenPairs = allPairs.filter(([s, t]) => !ALLOWED.some(([as, at]) => as === s && at === t));

describe('edgeRules', () => {
  it('should know exactly six role connections: input → core, core → model, tool, memory and output, memory → core', () => {
    expect(CONNECTION_RULES).toHaveLength(6);
  });

  it.each(ALLOWED)('should accept %s → %s as a %s edge', (source, target, kind) => {
    expect(checkConnection(source, target)).toEqual({ ok: true, kind });
    expect(checkConnection(source, target, kind)).toEqual({ ok: true, kind });
    expect(inferEdgeKind(source, target)).toBe(kind);
  });

  it('should refuse every other pair of node types with EDGE_NOT_ALLOWED and a message naming both types', () => {
    expect(forbiddenPairs).toHaveLength(NODE_TYPES.length ** 2 - ALLOWED.length);
    for (const [source, target] of forbiddenPairs) {
      const check = checkConnection(source, target);
      expect(check.ok, `${source} → ${target}`).toBe(false);
      if (check.ok) continue;
      expect(check.code).toBe(ErrorCode.EDGE_NOT_ALLOWED);
      expect(check.message.startsWith(`${source} cannot connect to ${target}: `)).toBe(true);
      expect(inferEdgeKind(source, target)).toBeUndefined();
    }
  });

  it.each([
    ['tool.http', 'tool.http', 'tool.http cannot connect to tool.http: tools connect only to an agent.core (agent.core → tool)'],
    ['tool.module', 'model.llm', 'tool.module cannot connect to model.llm: tools connect only to an agent.core (agent.core → tool)'],
    ['model.llm', 'memory.kv', 'model.llm cannot connect to memory.kv: models connect only to an agent.core (agent.core → model)'],
    ['trigger.input', 'response.chat', 'trigger.input cannot connect to response.chat: inputs connect only to an agent.core (input → agent.core)'],
    ['agent.core', 'agent.core', expect.stringContaining('a flow has exactly one agent.core')],
    ['response.end', 'tool.http', 'response.end cannot connect to tool.http: outputs are connected only from an agent.core (agent.core → output)'],
    ['model.llm', 'agent.core', 'model.llm cannot connect to agent.core: the edge goes the other way (agent.core → model.llm)'],
    ['agent.core', 'trigger.input', 'agent.core cannot connect to trigger.input: the edge goes the other way (trigger.input → agent.core)'],
    ['response.chat', 'agent.core', 'response.chat cannot connect to agent.core: the edge goes the other way (agent.core → response.chat)'],
  ])('should explain why %s → %s is refused', (source, target, message) => {
    expect(checkConnection(source, target)).toEqual({ ok: false, code: ErrorCode.EDGE_NOT_ALLOWED, message });
  });

  it('should accept memory in both directions with kind memory', () => {
    expect(checkConnection('agent.core', 'memory.kv', 'memory')).toEqual({ ok: true, kind: 'memory' });
    expect(checkConnection('memory.kv', 'agent.core', 'memory')).toEqual({ ok: true, kind: 'memory' });
  });

  it('should refuse a given kind that differs from the inferred one with EDGE_KIND_MISMATCH', () => {
    const check = checkConnection('agent.core', 'model.llm', 'data');
    expect(check).toMatchObject({ ok: false, code: ErrorCode.EDGE_KIND_MISMATCH, message: expect.stringContaining("'model'") });
    expect(checkConnection('trigger.input', 'agent.core', 'tool')).toMatchObject({ ok: false, code: ErrorCode.EDGE_KIND_MISMATCH });
  });

  it('should refuse a kind that is not an edge kind', () => {
    expect(checkConnection('agent.core', 'tool.http', 'wire')).toMatchObject({ ok: false, code: ErrorCode.EDGE_KIND_MISMATCH });
  });

  it('should infer the kind when it is null or undefined', () => {
    expect(checkConnection('agent.core', 'tool.http', null)).toEqual({ ok: true, kind: 'tool' });
    expect(checkConnection('agent.core', 'tool.http', undefined)).toEqual({ ok: true, kind: 'tool' });
  });

  it('should report a pair rule before a kind mismatch', () => {
    expect(checkConnection('tool.http', 'agent.core', 'tool')).toMatchObject({ ok: false, code: ErrorCode.EDGE_NOT_ALLOWED });
  });

  it('should refuse unknown node types with UNKNOWN_NODE_TYPE', () => {
    const check = checkConnection('agent.core', 'tool.mysql');
    expect(check).toMatchObject({ ok: false, code: ErrorCode.UNKNOWN_NODE_TYPE, message: expect.stringContaining("'tool.mysql'") });
    expect(checkConnection('__proto__', 'agent.core')).toMatchObject({ ok: false, code: ErrorCode.UNKNOWN_NODE_TYPE });
    expect(checkConnection('toString', 'constructor')).toMatchObject({ ok: false, code: ErrorCode.UNKNOWN_NODE_TYPE });
  });
});
