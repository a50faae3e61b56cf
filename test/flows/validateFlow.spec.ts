import { describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import { validators } from '../../src/contracts/schemas.js';
import { ErrorCode } from '../../src/errors.js';
import { type FlowValidation, validateFlow } from '../../src/flows/validateFlow.js';
import { errorsOf, expectErrorCodes, nodeOf, readFixture, validFlow } from './flowFixtures.js';

/** validFlow() changed by `change`, then validated. */
function validateChanged(change: (flow: FlowDefinition) => void): FlowValidation {
  const flow = validFlow();
  change(flow);
  return validateFlow(flow);
}

function okFlow(result: FlowValidation) {
  if (!result.ok) throw new Error(`expected a valid flow, got ${JSON.stringify(result.errors, null, 2)}`);
  return result;
}

describe('validateFlow', () => {
  describe('the graph format example (one node of each role, the agent config left to its defaults)', () => {
    const result = validateFlow(readFixture('graph-format-example.json'));

    it('should validate unchanged', () => {
      expect(result.ok).toBe(true);
    });

    it('should resolve the agent with its config normalised', () => {
      const { flow } = okFlow(result);
      expect(flow.agent.node.id).toBe('agent1');
      expect(flow.agent.config).toEqual({
        strategy: 'react',
        instructions: 'Eres un asistente útil',
        maxIterations: 5,
        stopConditions: [],
        debug: false,
        allowedTools: ['http1'],
      });
      expect(validators.agentCore(flow.agent.config)).toBe(true);
    });

    it('should resolve the model, tool, memory, trigger and output', () => {
      const { flow } = okFlow(result);
      expect(flow.model.id).toBe('llm1');
      expect(flow.tools).toEqual([{ node: expect.objectContaining({ id: 'http1' }), name: 'http1', hasInputSchema: false }]);
      expect(flow.memory?.id).toBe('memory1');
      expect(flow.trigger?.id).toBe('trigger1');
      expect(flow.outputs.map((n) => n.id)).toEqual(['response1']);
    });

    it('should warn that the http1 tool has no input schema, and nothing else', () => {
      expect(result.warnings).toEqual([
        expect.objectContaining({
          severity: 'warning',
          code: ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA,
          nodeId: 'http1',
          path: 'nodes[4].config',
        }),
      ]);
    });

    it('should not change the flow it was given', () => {
      const raw = readFixture('graph-format-example.json');
      const copy = structuredClone(raw);
      validateFlow(raw);
      expect(raw).toEqual(copy);
    });
  });

  describe('a valid flow', () => {
    it('should validate the small flow without warnings', () => {
      const { flow, warnings } = okFlow(validateFlow(validFlow()));
      expect(warnings).toEqual([]);
      expect(flow.tools).toEqual([expect.objectContaining({ name: 'lookup', hasInputSchema: true })]);
      expect(flow.memory).toBeUndefined();
    });

    it('should accept a memory wired in both directions', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'mem', type: 'memory.kv', config: { store: 'memory' } });
        flow.edges.push({ id: 'm1', source: 'agent', target: 'mem' }, { id: 'm2', source: 'mem', target: 'agent', kind: 'memory' });
      });
      expect(okFlow(result).flow.memory?.id).toBe('mem');
    });

    it('should accept edges whose kind matches their node types', () => {
      const result = validateChanged((flow) => {
        const kinds = ['data', 'model', 'tool', 'data'] as const;
        flow.edges.forEach((edge, i) => (edge.kind = kinds[i]));
      });
      expect(result.ok).toBe(true);
    });

    it('should take allowedTools from the connected tools in node order when it is absent', () => {
      const result = validateChanged((flow) => {
        nodeOf(flow, 'agent').config = { strategy: 'reactive' };
        flow.nodes.splice(1, 0, { id: 'calc', type: 'tool.module', config: { module: './calc.js', name: 'calculator' } });
        flow.nodes.push({ id: 'ignored', type: 'tool.module', config: { module: './x.js' } });
        flow.edges.push({ id: 'e9', source: 'agent', target: 'ignored' }, { id: 'e8', source: 'agent', target: 'calc' });
      });
      const { flow } = okFlow(result);
      expect(flow.agent.config.allowedTools).toEqual(['calculator', 'lookup', 'ignored']);
      expect(flow.agent.config.strategy).toBe('react');
      expect(flow.tools.map((t) => [t.name, t.hasInputSchema])).toEqual([
        ['calculator', true],
        ['lookup', true],
        ['ignored', true],
      ]);
    });

    it('should keep explicit agent settings', () => {
      const result = validateChanged((flow) => {
        nodeOf(flow, 'agent').config = {
          strategy: 'react',
          maxIterations: 7,
          allowedTools: ['lookup'],
          debug: true,
          stopConditions: [
            { type: 'final_answer' },
            { type: 'confidence_threshold', value: 0.9 },
            { type: 'iteration_limit', value: 7 },
          ],
        };
      });
      const { config } = okFlow(result).flow.agent;
      expect(config.maxIterations).toBe(7);
      expect(config.debug).toBe(true);
      expect(config.stopConditions).toHaveLength(3);
    });

    it('should use the first trigger connected to the agent when start is absent', () => {
      const result = validateChanged((flow) => {
        delete flow.start;
      });
      expect(okFlow(result).flow.trigger?.id).toBe('in');
    });

    it('should accept node ids that are Object.prototype names', () => {
      const text = JSON.stringify(validFlow()).replaceAll('"lookup"', '"__proto__"').replaceAll('"llm"', '"constructor"');
      const result = validateFlow(JSON.parse(text));
      expect(okFlow(result).flow.agent.config.allowedTools).toEqual(['__proto__']);
      expect(okFlow(result).flow.model.id).toBe('constructor');
    });
  });

  describe('each error code', () => {
    it('should report FLOW_SCHEMA_MISMATCH for values that are not a flow object', () => {
      for (const value of [null, undefined, [], 'flow', 42, true, {}]) {
        const [error] = expectErrorCodes(validateFlow(value), [ErrorCode.FLOW_SCHEMA_MISMATCH]);
        expect(error?.severity).toBe('error');
      }
    });

    it('should report FLOW_SCHEMA_MISMATCH with the path of the bad property', () => {
      const result = validateChanged((flow) => {
        (nodeOf(flow, 'agent') as unknown as Record<string, unknown>).colour = 'red';
      });
      const [error] = expectErrorCodes(result, [ErrorCode.FLOW_SCHEMA_MISMATCH]);
      expect(error).toMatchObject({ path: 'nodes[1]', nodeId: 'agent' });
      expect(error?.message).toContain("has unknown property 'colour'");
    });

    it('should report every node and edge that breaks the schema, not only the first', () => {
      const flow = validFlow() as unknown as { nodes: unknown[]; edges: unknown[]; extra?: number };
      flow.nodes[0] = { id: 7, type: 'trigger.input' };
      flow.nodes[2] = 'llm';
      flow.edges[1] = { id: 'e2', source: 'agent' };
      flow.extra = 1;
      const errors = expectErrorCodes(validateFlow(flow), Array(4).fill(ErrorCode.FLOW_SCHEMA_MISMATCH));
      expect(errors.map((e) => e.path)).toEqual(['flow', 'nodes[0].id', 'nodes[2]', 'edges[e2]']);
      expect(errors[3]?.edgeId).toBe('e2');
    });

    it('should report UNKNOWN_NODE_TYPE listing the known types', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'pg', type: 'tool.mysql' });
        flow.edges.push({ id: 'e5', source: 'agent', target: 'pg' });
      });
      const [error] = expectErrorCodes(result, [ErrorCode.UNKNOWN_NODE_TYPE]);
      expect(error).toMatchObject({ path: 'nodes[5].type', nodeId: 'pg' });
      expect(error?.hint).toContain('tool.http');
      expect(error?.hint).toContain('response.end');
    });

    it('should report DUPLICATE_NODE_ID', () => {
      const [error] = expectErrorCodes(
        validateChanged((flow) => flow.nodes.push({ id: 'out', type: 'response.end' })),
        [ErrorCode.DUPLICATE_NODE_ID],
      );
      expect(error).toMatchObject({ path: 'nodes[5].id', nodeId: 'out' });
      expect(error?.message).toContain('nodes[4]');
    });

    it('should report DUPLICATE_EDGE_ID', () => {
      const [error] = expectErrorCodes(
        validateChanged((flow) => {
          flow.edges[3]!.id = 'e1';
        }),
        [ErrorCode.DUPLICATE_EDGE_ID],
      );
      expect(error).toMatchObject({ path: 'edges[e1]', edgeId: 'e1' });
    });

    it('should report EDGE_NODE_MISSING for each missing end', () => {
      const errors = expectErrorCodes(
        validateChanged((flow) => flow.edges.push({ id: 'e5', source: 'ghost', target: 'phantom' })),
        [ErrorCode.EDGE_NODE_MISSING, ErrorCode.EDGE_NODE_MISSING],
      );
      expect(errors.map((e) => e.path)).toEqual(['edges[e5].source', 'edges[e5].target']);
      expect(errors[1]?.message).toContain("'phantom'");
    });

    it('should report EDGE_NOT_ALLOWED with the rule in the message', () => {
      const [error] = expectErrorCodes(
        validateChanged((flow) => flow.edges.push({ id: 'e5', source: 'lookup', target: 'out' })),
        [ErrorCode.EDGE_NOT_ALLOWED],
      );
      expect(error).toMatchObject({ path: 'edges[e5]', edgeId: 'e5' });
      expect(error?.message).toContain('tool.http cannot connect to response.chat: tools connect only to an agent.core');
    });

    it('should report a reversed capability edge once, as EDGE_NOT_ALLOWED', () => {
      const result = validateChanged((flow) => {
        flow.edges[1] = { id: 'e2', source: 'llm', target: 'agent' };
      });
      const [error] = expectErrorCodes(result, [ErrorCode.EDGE_NOT_ALLOWED]);
      expect(error?.message).toContain('the edge goes the other way (agent.core → model.llm)');
    });

    it('should report EDGE_KIND_MISMATCH', () => {
      const [error] = expectErrorCodes(
        validateChanged((flow) => {
          flow.edges[1]!.kind = 'data';
        }),
        [ErrorCode.EDGE_KIND_MISMATCH],
      );
      expect(error).toMatchObject({ path: 'edges[e2].kind', edgeId: 'e2' });
    });

    it('should report START_NODE_MISSING when start names no node or not a trigger', () => {
      const missing = expectErrorCodes(
        validateChanged((flow) => {
          flow.start = 'nope';
        }),
        [ErrorCode.START_NODE_MISSING],
      );
      expect(missing[0]).toMatchObject({ path: 'start' });
      expect(missing[0]?.hint).toContain("'in'");
      const notTrigger = expectErrorCodes(
        validateChanged((flow) => {
          flow.start = 'agent';
        }),
        [ErrorCode.START_NODE_MISSING],
      );
      expect(notTrigger[0]?.message).toContain('agent.core');
    });

    it('should report NO_AGENT_CORE', () => {
      const result = validateChanged((flow) => {
        flow.nodes.splice(1, 1);
        flow.edges = [];
      });
      expectErrorCodes(result, [ErrorCode.NO_AGENT_CORE]);
      expect(errorsOf(result)[0]?.path).toBe('nodes');
    });

    it('should report MULTIPLE_AGENT_CORES', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'agent2', type: 'agent.core', config: { strategy: 'react', allowedTools: ['lookup'] } });
        flow.edges.push({ id: 'e5', source: 'agent2', target: 'llm' }, { id: 'e6', source: 'agent2', target: 'lookup' });
      });
      const [error] = expectErrorCodes(result, [ErrorCode.MULTIPLE_AGENT_CORES]);
      expect(error?.message).toContain("'agent', 'agent2'");
    });

    it('should report CAPABILITY_NOT_CONNECTED for each model, tool or memory without an edge to the agent', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'mem', type: 'memory.kv' });
        flow.nodes.push({ id: 'calc', type: 'tool.module', config: { module: './calc.js' } });
        flow.nodes.push({ id: 'spare', type: 'response.end' });
      });
      const errors = expectErrorCodes(result, [ErrorCode.CAPABILITY_NOT_CONNECTED, ErrorCode.CAPABILITY_NOT_CONNECTED]);
      expect(errors.map((e) => [e.nodeId, e.path])).toEqual([
        ['mem', 'nodes[5]'],
        ['calc', 'nodes[6]'],
      ]);
      expect(errors[0]?.hint).toContain('agent → mem');
    });

    it('should report NO_MODEL', () => {
      const result = validateChanged((flow) => {
        flow.nodes.splice(2, 1);
        flow.edges.splice(1, 1);
      });
      const [error] = expectErrorCodes(result, [ErrorCode.NO_MODEL]);
      expect(error).toMatchObject({ path: 'nodes[1]', nodeId: 'agent' });
    });

    it('should report MULTIPLE_MODELS', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'llm2', type: 'model.llm' });
        flow.edges.push({ id: 'e5', source: 'agent', target: 'llm2' });
      });
      expectErrorCodes(result, [ErrorCode.MULTIPLE_MODELS]);
    });

    it('should report MULTIPLE_MEMORIES', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'mem1', type: 'memory.kv' }, { id: 'mem2', type: 'memory.kv' });
        flow.edges.push({ id: 'e5', source: 'agent', target: 'mem1' }, { id: 'e6', source: 'mem2', target: 'agent' });
      });
      const [error] = expectErrorCodes(result, [ErrorCode.MULTIPLE_MEMORIES]);
      expect(error?.message).toContain("'mem1', 'mem2'");
    });

    it.each([
      ['an agent maxIterations out of range', (f: FlowDefinition) => (nodeOf(f, 'agent').config!.maxIterations = 50), 'nodes[1].config.maxIterations'],
      ['an unknown agent strategy', (f: FlowDefinition) => (nodeOf(f, 'agent').config!.strategy = 'plan'), 'nodes[1].config.strategy'],
      ['an unknown agent property', (f: FlowDefinition) => (nodeOf(f, 'agent').config!.temperature = 1), 'nodes[1].config'],
      ['a tool.http without url', (f: FlowDefinition) => delete nodeOf(f, 'lookup').config!.url, 'nodes[3].config'],
      [
        'a tool name with spaces',
        (f: FlowDefinition) => {
          nodeOf(f, 'lookup').config!.name = 'look up';
          nodeOf(f, 'agent').config!.allowedTools = ['look up'];
        },
        'nodes[3].config.name',
      ],
      ['a model decisionFormat that does not exist', (f: FlowDefinition) => (nodeOf(f, 'llm').config!.decisionFormat = 'xml'), 'nodes[2].config.decisionFormat'],
      ['a model protocol that does not exist', (f: FlowDefinition) => (nodeOf(f, 'llm').config!.protocol = 'functions'), 'nodes[2].config.protocol'],
      ['a response.chat format that does not exist', (f: FlowDefinition) => (nodeOf(f, 'out').config = { format: 'pdf' }), 'nodes[4].config.format'],
      ['a trigger with an unknown property', (f: FlowDefinition) => (nodeOf(f, 'in').config = { schema: {} }), 'nodes[0].config'],
      ['a tool inputSchema that does not compile', (f: FlowDefinition) => (nodeOf(f, 'lookup').config!.inputSchema = { type: 'nope' }), 'nodes[3].config.inputSchema'],
      ['a trigger inputSchema that does not compile', (f: FlowDefinition) => (nodeOf(f, 'in').config = { inputSchema: { required: 'id' } }), 'nodes[0].config.inputSchema'],
      ['a confidence_threshold above 1', (f: FlowDefinition) => (nodeOf(f, 'agent').config!.stopConditions = [{ type: 'confidence_threshold', value: 1.5 }]), 'nodes[1].config.stopConditions[0].value'],
      ['a confidence_threshold without value', (f: FlowDefinition) => (nodeOf(f, 'agent').config!.stopConditions = [{ type: 'final_answer' }, { type: 'confidence_threshold' }]), 'nodes[1].config.stopConditions[1].value'],
      ['an iteration_limit above maxIterations', (f: FlowDefinition) => (nodeOf(f, 'agent').config!.stopConditions = [{ type: 'iteration_limit', value: 4 }]), 'nodes[1].config.stopConditions[0].value'],
      ['an iteration_limit that is not an integer', (f: FlowDefinition) => (nodeOf(f, 'agent').config!.stopConditions = [{ type: 'iteration_limit', value: 1.5 }]), 'nodes[1].config.stopConditions[0].value'],
      ['an iteration_limit of 0', (f: FlowDefinition) => (nodeOf(f, 'agent').config!.stopConditions = [{ type: 'iteration_limit', value: 0 }]), 'nodes[1].config.stopConditions[0].value'],
    ])('should report NODE_CONFIG_INVALID for %s', (_what, change, path) => {
      const [error] = expectErrorCodes(validateChanged(change), [ErrorCode.NODE_CONFIG_INVALID]);
      expect(error?.path).toBe(path);
      expect(error?.hint).toBeTruthy();
    });

    it('should report NODE_CONFIG_INVALID for a tool named by an id that is not a valid tool name', () => {
      const text = JSON.stringify(validFlow()).replaceAll('"lookup"', '"look up"');
      const [error] = expectErrorCodes(validateFlow(JSON.parse(text)), [ErrorCode.NODE_CONFIG_INVALID]);
      expect(error).toMatchObject({ path: 'nodes[3].id', nodeId: 'look up' });
    });

    it('should report DUPLICATE_TOOL_NAME', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'calc', type: 'tool.module', config: { module: './calc.js', name: 'lookup' } });
        flow.edges.push({ id: 'e5', source: 'agent', target: 'calc' });
      });
      const [error] = expectErrorCodes(result, [ErrorCode.DUPLICATE_TOOL_NAME]);
      expect(error).toMatchObject({ nodeId: 'calc', path: 'nodes[5]' });
    });

    it('should report ALLOWED_TOOL_NOT_CONNECTED with the entry path', () => {
      const result = validateChanged((flow) => {
        nodeOf(flow, 'agent').config!.allowedTools = ['lookup', 'ghost'];
      });
      const [error] = expectErrorCodes(result, [ErrorCode.ALLOWED_TOOL_NOT_CONNECTED]);
      expect(error).toMatchObject({ path: 'nodes[1].config.allowedTools[1]', nodeId: 'agent' });
      expect(error?.message).toContain("'ghost'");
    });

    it('should report NO_TOOLS when no tool is connected and allowedTools is absent or empty', () => {
      for (const allowedTools of [undefined, []]) {
        const result = validateChanged((flow) => {
          flow.nodes.splice(3, 1);
          flow.edges.splice(2, 1);
          const config: Record<string, unknown> = { strategy: 'reactive' };
          if (allowedTools !== undefined) config.allowedTools = allowedTools;
          nodeOf(flow, 'agent').config = config;
        });
        expectErrorCodes(result, [ErrorCode.NO_TOOLS]);
      }
    });

    it('should report ALLOWED_TOOL_NOT_CONNECTED (not NO_TOOLS) when allowedTools names tools that are not connected', () => {
      const result = validateChanged((flow) => {
        flow.nodes.splice(3, 1);
        flow.edges.splice(2, 1);
      });
      expectErrorCodes(result, [ErrorCode.ALLOWED_TOOL_NOT_CONNECTED]);
    });
  });

  describe('warnings', () => {
    it('should warn TOOL_WITHOUT_INPUT_SCHEMA for a connected tool.http without inputSchema', () => {
      const result = validateChanged((flow) => delete nodeOf(flow, 'lookup').config!.inputSchema);
      const { warnings, flow } = okFlow(result);
      expect(warnings.map((w) => [w.code, w.severity, w.nodeId])).toEqual([[ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA, 'warning', 'lookup']]);
      expect(flow.tools[0]?.hasInputSchema).toBe(false);
    });

    it('should not warn about tool.module tools, which get their schema from the module', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'calc', type: 'tool.module', config: { module: './calc.js' } });
        flow.edges.push({ id: 'e5', source: 'agent', target: 'calc' });
        nodeOf(flow, 'agent').config!.allowedTools = ['lookup', 'calc'];
      });
      expect(okFlow(result).warnings).toEqual([]);
    });

    it('should warn TOOL_NOT_IN_ALLOWED_TOOLS for a connected tool left out of an explicit allowedTools', () => {
      const result = validateChanged((flow) => {
        flow.nodes.push({ id: 'calc', type: 'tool.module', config: { module: './calc.js' } });
        flow.edges.push({ id: 'e5', source: 'agent', target: 'calc' });
      });
      const { warnings, flow } = okFlow(result);
      expect(warnings).toEqual([
        expect.objectContaining({ code: ErrorCode.TOOL_NOT_IN_ALLOWED_TOOLS, severity: 'warning', nodeId: 'calc', path: 'nodes[5]' }),
      ]);
      expect(flow.agent.config.allowedTools).toEqual(['lookup']);
      expect(flow.tools.map((t) => t.name)).toEqual(['lookup', 'calc']);
    });

    it('should return warnings alongside errors', () => {
      const result = validateChanged((flow) => {
        delete nodeOf(flow, 'lookup').config!.inputSchema;
        nodeOf(flow, 'agent').config!.maxIterations = 0;
      });
      expect(result.ok).toBe(false);
      expect(result.warnings.map((w) => w.code)).toEqual([ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA]);
    });
  });

  describe('tool.postgres', () => {
    /** validFlow() with a tool.postgres node 'orders' connected and allowed, its config changed by `change`. */
    function validateWithPostgres(change: (config: Record<string, unknown>) => void = () => {}): FlowValidation {
      return validateChanged((flow) => {
        const config: Record<string, unknown> = {
          query: 'select * from orders where id = :orderId and note <> \':not_a_parameter\'',
          inputSchema: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } },
        };
        change(config);
        flow.nodes.push({ id: 'orders', type: 'tool.postgres', config });
        flow.edges.push({ id: 'e5', source: 'agent', target: 'orders' });
        nodeOf(flow, 'agent').config!.allowedTools = ['lookup', 'orders'];
      });
    }

    it('should accept a tool.postgres node whose inputSchema declares every parameter', () => {
      const { flow, warnings } = okFlow(validateWithPostgres());
      expect(warnings).toEqual([]);
      expect(flow.tools.map((t) => [t.name, t.hasInputSchema])).toEqual([
        ['lookup', true],
        ['orders', true],
      ]);
    });

    it('should require inputSchema with NODE_CONFIG_INVALID (not only a warning)', () => {
      const result = validateWithPostgres((config) => delete config.inputSchema);
      const [error] = expectErrorCodes(result, [ErrorCode.NODE_CONFIG_INVALID]);
      expect(error).toMatchObject({ nodeId: 'orders', path: 'nodes[5].config' });
      expect(error?.message).toContain("'inputSchema'");
      expect(result.warnings).toEqual([]);
    });

    it('should report a parameter the inputSchema does not declare', () => {
      const result = validateWithPostgres((config) => (config.query = 'select * from orders where id = :orderId limit :max'));
      const [error] = expectErrorCodes(result, [ErrorCode.NODE_CONFIG_INVALID]);
      expect(error).toMatchObject({ nodeId: 'orders', path: 'nodes[5].config.inputSchema' });
      expect(error?.message).toContain(':max');
    });

    it.each([
      ['select 1; drop table orders', 'more than one statement'],
      ["select 'open", 'unterminated string literal'],
      ['select * from orders where id = $1', 'positional parameters'],
    ])('should report the query %j as NODE_CONFIG_INVALID', (query, message) => {
      const [error] = expectErrorCodes(
        validateWithPostgres((config) => (config.query = query)),
        [ErrorCode.NODE_CONFIG_INVALID],
      );
      expect(error).toMatchObject({ nodeId: 'orders', path: 'nodes[5].config.query' });
      expect(error?.message).toContain(message);
    });

    it('should check the rest of the config against the schema', () => {
      const result = validateWithPostgres((config) => {
        config.maxRows = 0;
      });
      expectErrorCodes(result, [ErrorCode.NODE_CONFIG_INVALID]);
      expectErrorCodes(validateWithPostgres((config) => (config.password = 'x')), [ErrorCode.NODE_CONFIG_INVALID]);
    });
  });

  describe('several problems at once', () => {
    it('should report all errors together, each with a code, path, message and hint', () => {
      const result = validateChanged((flow) => {
        flow.start = 'ghost';
        flow.nodes.push({ id: 'pg', type: 'tool.mysql' }, { id: 'mem', type: 'memory.kv', config: { maxTurns: 0 } });
        flow.nodes.splice(2, 1);
        flow.edges[1] = { id: 'e2', source: 'lookup', target: 'lookup' };
        flow.edges.push({ id: 'e2', source: 'agent', target: 'nowhere' });
        nodeOf(flow, 'agent').config!.allowedTools = ['lookup', 'web'];
      });
      const errors = expectErrorCodes(result, [
        ErrorCode.UNKNOWN_NODE_TYPE,
        ErrorCode.EDGE_NODE_MISSING,
        ErrorCode.EDGE_NOT_ALLOWED,
        ErrorCode.DUPLICATE_EDGE_ID,
        ErrorCode.START_NODE_MISSING,
        ErrorCode.NODE_CONFIG_INVALID,
        ErrorCode.CAPABILITY_NOT_CONNECTED,
        ErrorCode.NO_MODEL,
        ErrorCode.ALLOWED_TOOL_NOT_CONNECTED,
      ]);
      for (const error of errors) {
        expect(error.severity).toBe('error');
        expect(error.path, error.code).toBeTruthy();
        expect(error.message.length, error.code).toBeGreaterThan(10);
        expect(error.hint, error.code).toBeTruthy();
      }
    });

    it('should report the same errors for the invalid-graph fixture', () => {
      const codes = errorsOf(validateFlow(readFixture('invalid-graph.json'))).map((e) => e.code);
      expect(new Set(codes)).toEqual(
        new Set([
          ErrorCode.MULTIPLE_AGENT_CORES,
          ErrorCode.EDGE_NOT_ALLOWED,
          ErrorCode.CAPABILITY_NOT_CONNECTED,
          ErrorCode.NODE_CONFIG_INVALID,
          ErrorCode.NO_MODEL,
          ErrorCode.NO_TOOLS,
        ]),
      );
    });
  });

  describe('hostile input', () => {
    it('should not throw on __proto__ keys', () => {
      const flow = JSON.parse(
        '{"__proto__": {"polluted": true}, "nodes": [{"id": "a", "type": "agent.core", "config": {"__proto__": {"strategy": "react"}}}], "edges": []}',
      );
      const result = validateFlow(flow);
      expect(result.ok).toBe(false);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const inConfig = validateChanged((f) => {
        nodeOf(f, 'agent').config = JSON.parse('{"strategy": "react", "__proto__": {"maxIterations": 99}, "allowedTools": ["lookup"]}');
      });
      expect(errorsOf(inConfig)[0]).toMatchObject({ code: ErrorCode.NODE_CONFIG_INVALID, path: 'nodes[1].config' });
    });

    it('should not throw on deeply nested junk', () => {
      let deep: unknown = {};
      for (let i = 0; i < 100_000; i += 1) deep = { a: [deep] };
      expect(() => validateFlow({ nodes: [deep], edges: [deep] })).not.toThrow();
      expect(() => validateChanged((f) => (nodeOf(f, 'agent').config!.instructions = deep as string))).not.toThrow();
      expect(() => validateChanged((f) => (nodeOf(f, 'lookup').config!.inputSchema = { properties: { a: deep } }))).not.toThrow();
      const result = validateChanged((f) => (nodeOf(f, 'llm').config!.answers = [deep]));
      expect(result.ok).toBe(true);
    });

    it('should validate the same flow twice in one process with the same result', () => {
      const withId = (): FlowDefinition => {
        const flow = validFlow();
        nodeOf(flow, 'lookup').config!.inputSchema = { $id: 'https://example.com/lookup-input', type: 'object' };
        return flow;
      };
      expect(validateFlow(withId()).ok).toBe(true);
      expect(validateFlow(withId()).ok).toBe(true);
    });
  });
});
