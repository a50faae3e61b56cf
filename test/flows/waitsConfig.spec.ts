// The flow format of runs that wait: tool.client nodes, the agent's requiresApproval and
// waitTimeoutMs, each checked with its code, and the client tool's spec in every mode's tool list.
import { describe, expect, it } from 'vitest';
import type { FlowDefinition } from '../../src/contracts/schema-types.js';
import { ErrorCode } from '../../src/errors.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { planRun } from '../../src/runtime/runPlan.js';
import { allowedToolSpecs, buildTools } from '../../src/runtime/buildTools.js';
import { errorsOf, validFlow } from './flowFixtures.js';

/** validFlow() with a tool.client `ask_user` connected, and `agent` merged into the agent's config. */
function clientFlow(agent: Record<string, unknown> = {}, client: Record<string, unknown> = {}): FlowDefinition {
  const flow = validFlow();
  flow.nodes.push({
    id: 'ask_user',
    type: 'tool.client',
    config: { description: 'asks the user', inputSchema: { type: 'object', properties: { question: { type: 'string' } } }, ...client },
  });
  flow.edges.push({ id: 'e-ask', source: 'agent', target: 'ask_user' });
  const core = flow.nodes.find((node) => node.id === 'agent');
  if (core) core.config = { ...core.config, allowedTools: ['lookup', 'ask_user'], ...agent };
  return flow;
}

describe('the flow format of waits', () => {
  it('should accept a tool.client and an agent that requires approval of a tool it allows', () => {
    const result = validateFlow(clientFlow({ requiresApproval: ['lookup'], waitTimeoutMs: 60_000 }));
    expect(result.ok, JSON.stringify(result.ok ? [] : result.errors)).toBe(true);
    expect(result).toMatchObject({ ok: true, flow: { agent: { config: { requiresApproval: ['lookup'], waitTimeoutMs: 60_000 } } } });
  });

  it('should refuse requiresApproval naming a tool the agent does not allow, with APPROVAL_TOOL_NOT_ALLOWED at its place', () => {
    const errors = errorsOf(validateFlow(clientFlow({ requiresApproval: ['lookup', 'delete_everything'] })));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: ErrorCode.APPROVAL_TOOL_NOT_ALLOWED,
      path: 'nodes[1].config.requiresApproval[1]',
      nodeId: 'agent',
    });
    expect(errors[0]?.message).toContain("'delete_everything'");
    expect(errors[0]?.hint).toContain('remove');
  });

  it('should refuse a wait deadline out of range, and a tool.client config that is not one', () => {
    expect(errorsOf(validateFlow(clientFlow({ waitTimeoutMs: 0 }))).map((e) => e.code)).toEqual([ErrorCode.NODE_CONFIG_INVALID]);
    expect(errorsOf(validateFlow(clientFlow({ requiresApproval: 'lookup' }))).map((e) => e.code)).toEqual([ErrorCode.NODE_CONFIG_INVALID]);
    expect(errorsOf(validateFlow(clientFlow({}, { url: 'https://x' }))).map((e) => e.code)).toEqual([ErrorCode.NODE_CONFIG_INVALID]);
    const badSchema = errorsOf(validateFlow(clientFlow({}, { inputSchema: { type: 'nonsense' } })));
    expect(badSchema.map((e) => e.code)).toEqual([ErrorCode.NODE_CONFIG_INVALID]);
    expect(badSchema[0]?.path).toBe('nodes[5].config.inputSchema');
  });

  it('should warn of a tool.client without an input schema, as of any tool', () => {
    const result = validateFlow(clientFlow({}, { inputSchema: undefined }));
    expect(result.warnings.map((w) => w.code)).toContain(ErrorCode.TOOL_WITHOUT_INPUT_SCHEMA);
  });

  it('should tell the model of a client tool in node order, marked executor "client", and build nothing to serve for it', async () => {
    const result = validateFlow(clientFlow());
    if (!result.ok) throw new Error('the flow should be valid');
    const plan = planRun(result.flow, '/tmp');
    const specs = await allowedToolSpecs(plan);
    expect(specs.map((spec) => [spec.name, spec.executor])).toEqual([
      ['lookup', undefined],
      ['ask_user', 'client'],
    ]);
    expect(specs[1]).toEqual({
      name: 'ask_user',
      description: 'asks the user',
      inputSchema: { type: 'object', properties: { question: { type: 'string' } } },
      executor: 'client',
    });
    const built = await buildTools(plan);
    expect(built.tools.map((tool) => tool.name)).toEqual(['lookup']);
    await built.close();
  });
});
