import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { checkAgentWiring } from '../../src/nodeRed/agentWiring.js';
import { agentFlowDocument } from '../../src/nodeRed/flowDocument.js';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { NodeRedType } from '../../src/flows/nodeRed/nodeRedTypes.js';

const byId = (nodes: readonly NodeRedNodeConfig[]) => new Map(nodes.map((node) => [node.id, node]));

describe("an agent's wiring as a Redflow flow document", () => {
  const nodes: NodeRedNodeConfig[] = [
    { id: 'in', type: 'redflow-input', name: 'Question', inputSchema: '{"type":"string"}', x: 10, y: 20, wires: [['agent']] },
    { id: 'inject', type: 'inject', wires: [['agent']] },
    {
      id: 'agent',
      type: 'redflow-agent',
      name: 'Shop agent',
      strategy: 'react',
      maxIterations: '4',
      allowedTools: '',
      stopConditions: [{ type: 'confidence_threshold', value: 0.9 }],
      debug: false,
      instructions: '',
      info: 'Node-RED notes, not config',
      wires: [['reply', 'debug'], ['model'], ['http', 'flowtool'], ['memory']],
    },
    { id: 'model', type: 'redflow-model', provider: 'scripted', answers: '["a"]', temperature: '', wires: [] },
    { id: 'http', type: 'redflow-tool-http', name: 'weather', url: 'http://x/{city}', idempotencyHeader: 'false', timeoutMs: '2500', wires: [] },
    { id: 'flowtool', type: 'redflow-tool-in', name: 'lookup', description: 'finds', inputSchema: { type: 'object' }, timeoutMs: 100, wires: [['out']] },
    { id: 'out', type: 'redflow-tool-out', wires: [] },
    { id: 'memory', type: 'redflow-memory', store: 'memory', maxTurns: 3, wires: [] },
    { id: 'reply', type: 'redflow-response', format: 'markdown', wires: [[]] },
    { id: 'debug', type: 'debug', wires: [] },
  ];

  it('has the same node kinds and config fields, the wires as edges of their output\'s kind, and leaves Node-RED\'s own nodes out', () => {
    const { flow, problems } = agentFlowDocument('agent', byId(nodes));
    expect(problems).toEqual([]);
    expect(flow.id).toBe('agent');
    expect(flow.name).toBe('Shop agent');
    const node = (id: string) => flow.nodes.find((candidate) => candidate.id === id);
    expect(node('agent')).toEqual({
      id: 'agent',
      type: 'agent.core',
      label: 'Shop agent',
      config: { strategy: 'react', maxIterations: 4, stopConditions: [{ type: 'confidence_threshold', value: 0.9 }], debug: false },
    });
    expect(node('in')).toEqual({ id: 'in', type: 'trigger.input', label: 'Question', config: { inputSchema: { type: 'string' } }, position: { x: 10, y: 20 } });
    expect(node('model')).toMatchObject({ type: 'model.llm', config: { provider: 'scripted', answers: ['a'] } });
    expect(node('http')).toMatchObject({ type: 'tool.http', config: { name: 'weather', url: 'http://x/{city}', idempotencyHeader: false, timeoutMs: 2500 } });
    expect(node('flowtool')).toEqual({ id: 'flowtool', type: 'tool.flow', config: { name: 'lookup', description: 'finds', inputSchema: { type: 'object' }, timeoutMs: 100 } });
    expect(node('memory')).toMatchObject({ type: 'memory.kv', config: { store: 'memory', maxTurns: 3 } });
    expect(node('reply')).toMatchObject({ type: 'response.chat', config: { format: 'markdown' } });
    expect(flow.nodes.map((candidate) => candidate.id).sort()).toEqual(['agent', 'flowtool', 'http', 'in', 'memory', 'model', 'reply']);
    expect(flow.edges.map(({ source, target, kind }) => `${source}→${target}:${kind ?? 'inferred'}`).sort()).toEqual([
      'agent→flowtool:tool',
      'agent→http:tool',
      'agent→memory:memory',
      'agent→model:model',
      'agent→reply:data',
      'in→agent:inferred',
    ]);
    expect(checkAgentWiring('agent', byId(nodes)).validation).toMatchObject({ ok: true });
  });

  it('checks a flow tool\'s input schema on its own: a warning without one, an error for one that does not compile', () => {
    const without = nodes.map((node) => (node.id === 'flowtool' ? { ...node, inputSchema: '' } : node));
    const warned = checkAgentWiring('agent', byId(without)).validation;
    expect(warned.ok).toBe(true);
    expect(warned.warnings.map((warning) => warning.code)).toContain(ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA);
    const broken = nodes.map((node) => (node.id === 'flowtool' ? { ...node, inputSchema: { type: 'no-such-type' } } : node));
    const refused = checkAgentWiring('agent', byId(broken)).validation;
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.errors.map((error) => error.code)).toEqual([ErrorCode.NODE_CONFIG_INVALID]);
  });

  it('lets agents chain: another agent or a response wired into an agent is an input, not a capability', () => {
    const chained: NodeRedNodeConfig[] = [
      ...nodes,
      { id: 'first', type: 'redflow-agent', wires: [['agent'], [], [], []] },
      { id: 'formatted', type: 'redflow-response', wires: [['agent']] },
    ];
    expect(checkAgentWiring('agent', byId(chained)).validation.ok).toBe(true);
  });

  it('never throws, whatever the deployed nodes hold, and reports only known codes', () => {
    const types = [...Object.values(NodeRedType), 'inject', 'debug'];
    const known = new Set<string>(Object.values(ErrorCode));
    const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(''), fc.constant(null), fc.jsonValue());
    const node = (ids: string[]) =>
      fc.record({
        type: fc.constantFrom(...types),
        name: value,
        maxIterations: value,
        answers: value,
        inputSchema: value,
        allowedTools: value,
        url: value,
        query: value,
        provider: value,
        wires: fc.array(fc.array(fc.constantFrom(...ids), { maxLength: 3 }), { maxLength: 5 }),
      });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }).chain((count) => {
          const ids = Array.from({ length: count }, (_, index) => `n${index}`);
          return fc.tuple(fc.constant(ids), fc.array(node(ids), { minLength: count, maxLength: count }));
        }),
        ([ids, configs]) => {
          const all = configs.map((config, index) => ({ ...config, id: ids[index] ?? 'x', type: index === 0 ? NodeRedType.Agent : config.type }));
          const { validation } = checkAgentWiring('n0', byId(all as NodeRedNodeConfig[]));
          const found = validation.ok ? validation.warnings : [...validation.errors, ...validation.warnings];
          for (const diagnostic of found) expect(known.has(diagnostic.code)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
