import { describe, expect, it } from 'vitest';
import { validators } from '../../src/contracts/schemas.js';
import { configSchemaOf, validateNodeConfig } from '../../src/editor/flow/configSchemas.js';
import { PALETTE, defaultConfig, newNodeId } from '../../src/editor/flow/palette.js';
import { NODE_TYPES, NodeType, roleOf } from '../../src/flows/nodeTypes.js';
import { TOOL_NAME_PATTERN, validateFlow } from '../../src/flows/validateFlow.js';

const nodeValidators = {
  [NodeType.TriggerInput]: () => validators.triggerInputConfig,
  [NodeType.ModelLlm]: () => validators.modelLlmConfig,
  [NodeType.MemoryKv]: () => validators.memoryKvConfig,
  [NodeType.ToolHttp]: () => validators.toolHttpConfig,
  [NodeType.ToolModule]: () => validators.toolModuleConfig,
  [NodeType.ToolPostgres]: () => validators.toolPostgresConfig,
  [NodeType.ToolMcp]: () => validators.toolMcpConfig,
  [NodeType.ToolClient]: () => validators.toolClientConfig,
  [NodeType.ToolFlow]: () => validators.toolFlowConfig,
  [NodeType.AgentRef]: () => validators.agentRefConfig,
  [NodeType.AgentA2a]: () => validators.agentA2aConfig,
  [NodeType.ResponseChat]: () => validators.responseChatConfig,
  [NodeType.ResponseEnd]: () => validators.responseEndConfig,
};

describe('the palette', () => {
  it('should list every node type once, grouped by role in reading order', () => {
    expect(PALETTE.flatMap((group) => group.types).sort()).toEqual([...NODE_TYPES].sort());
    expect(PALETTE.map((group) => group.title)).toEqual(['Input', 'Agent core', 'Model', 'Tools', 'Memory', 'Output']);
    for (const group of PALETTE) for (const type of group.types) expect(roleOf(type)).toBe(group.role);
    expect(PALETTE.find((group) => group.role === 'tool')?.types).toEqual(['tool.http', 'tool.module', 'tool.postgres', 'tool.mcp', 'tool.client', 'tool.flow', 'agent.ref', 'agent.a2a']);
  });

  it.each(NODE_TYPES)('should start a %s with a config valid against its schema, in the browser check and the runtime one', (type) => {
    const config = defaultConfig(type);
    expect(validateNodeConfig(type, config, ['a_tool'])).toEqual([]);
    const valid = type === NodeType.AgentCore ? validators.agentCore({ ...config, allowedTools: ['a_tool'] }) : nodeValidators[type]()(config);
    expect(valid).toBe(true);
  });

  it('should make a flow of palette defaults that the runtime validation accepts', () => {
    const ids = new Set<string>();
    const add = (type: (typeof NODE_TYPES)[number]) => {
      const id = newNodeId(type, ids);
      ids.add(id);
      expect(id).toMatch(TOOL_NAME_PATTERN);
      return { id, type, config: defaultConfig(type) };
    };
    const input = add(NodeType.TriggerInput);
    const core = add(NodeType.AgentCore);
    const capabilities = [NodeType.ModelLlm, NodeType.ToolHttp, NodeType.MemoryKv, NodeType.ResponseChat].map(add);
    const edge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target });
    const flow = { nodes: [input, core, ...capabilities], edges: [edge(input.id, core.id), ...capabilities.map((node) => edge(core.id, node.id))] };
    const result = validateFlow(flow);
    expect(result.ok ? [] : result.errors).toEqual([]);
  });

  it('should give new nodes ids that are valid tool names and not taken', () => {
    expect(newNodeId(NodeType.ToolHttp, new Set())).toBe('http_tool');
    expect(newNodeId(NodeType.ToolHttp, new Set(['http_tool']))).toBe('http_tool_2');
  });
});

describe('config validation in the browser', () => {
  it('should say which field is wrong, in words', () => {
    expect(validateNodeConfig(NodeType.ToolModule, {})).toEqual([{ field: 'module', message: 'is required' }]);
    expect(validateNodeConfig(NodeType.ModelLlm, { provider: 'gpt' })).toEqual([
      { field: 'provider', message: 'must be one of "scripted", "openai", "openai-compatible", "ollama", "vllm", "llamacpp", "anthropic"' },
    ]);
    expect(validateNodeConfig(NodeType.MemoryKv, { colour: 'red' })).toEqual([{ message: "unknown property 'colour'" }]);
    expect(validateNodeConfig(NodeType.AgentCore, { strategy: 'react', maxIterations: 21 }, ['t'])).toEqual([{ field: 'maxIterations', message: 'must be <= 20' }]);
    expect(validateNodeConfig(NodeType.AgentCore, { strategy: 'react', allowedTools: [] }, ['t'])).toEqual([
      { field: 'allowedTools', message: "must list at least one tool: a flow's agent acts through its tools" },
    ]);
  });

  it('should accept an agent with strategy reactive and no allowedTools', () => {
    expect(validateNodeConfig(NodeType.AgentCore, { strategy: 'reactive' }, ['http1'])).toEqual([]);
  });

  it('should give the forms each property’s schema with $refs resolved', () => {
    expect(configSchemaOf(NodeType.ToolModule).properties?.name).toMatchObject({ type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' });
    expect(configSchemaOf(NodeType.AgentCore).properties?.maxIterations).toMatchObject({ minimum: 1, maximum: 20 });
    expect(configSchemaOf(NodeType.ToolPostgres).required).toEqual(['query', 'inputSchema']);
  });
});
