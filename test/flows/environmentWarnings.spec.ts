import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { environmentWarnings } from '../../src/flows/environmentWarnings.js';
import { validateFlow, type ResolvedFlow } from '../../src/flows/validateFlow.js';
import { allowedToolSpecs, buildTools } from '../../src/runtime/buildTools.js';
import { planRun } from '../../src/runtime/runPlan.js';
import { ErrorCode, type RedflowError } from '../../src/errors.js';

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples');

/** An example flow, validated, with `edit` applied to its JSON first. */
function exampleFlow(name: string, edit?: (flow: { nodes: { id: string; config?: Record<string, unknown> }[] }) => void): ResolvedFlow {
  const json = JSON.parse(readFileSync(path.join(EXAMPLES, name, 'flow.json'), 'utf8'));
  edit?.(json);
  const validation = validateFlow(json);
  if (!validation.ok) throw new Error(`${name} does not validate: ${JSON.stringify(validation.errors)}`);
  return validation.flow;
}

const configOf = (flow: { nodes: { id: string; config?: Record<string, unknown> }[] }, id: string) => {
  const node = flow.nodes.find((n) => n.id === id);
  if (!node) throw new Error(`no node ${id}`);
  return (node.config ??= {});
};

describe('environmentWarnings', () => {
  it('should warn ENV_NOT_SET for an OpenAI model without its key, naming the node, the variable and how to set it', () => {
    const warnings = environmentWarnings(exampleFlow('openai-agent'), { REDFLOW_MODEL: 'gpt-4o-mini' });
    expect(warnings).toEqual([
      expect.objectContaining({ severity: 'warning', code: ErrorCode.ENV_NOT_SET, nodeId: 'model', path: 'nodes[2].config' }),
    ]);
    expect(warnings[0]?.message).toContain("model.llm 'model'");
    expect(warnings[0]?.message).toContain('$OPENAI_API_KEY');
    expect(warnings[0]?.hint).toContain('export OPENAI_API_KEY=');
  });

  it('should warn ENV_NOT_SET for an Anthropic model without $ANTHROPIC_API_KEY (examples/openai-agent/anthropic.json)', () => {
    const json = JSON.parse(readFileSync(path.join(EXAMPLES, 'openai-agent', 'anthropic.json'), 'utf8'));
    const validation = validateFlow(json);
    if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
    const [warning, ...others] = environmentWarnings(validation.flow, { REDFLOW_MODEL: 'claude-sonnet-4-5', OPENAI_API_KEY: 'sk-not-this-one' });
    expect(others).toEqual([]);
    expect(warning).toMatchObject({ code: ErrorCode.ENV_NOT_SET, nodeId: 'model' });
    expect(warning?.message).toContain('$ANTHROPIC_API_KEY');
    expect(warning?.hint).toContain('export ANTHROPIC_API_KEY=');
    expect(environmentWarnings(validation.flow, { REDFLOW_MODEL: 'claude-sonnet-4-5', ANTHROPIC_API_KEY: 'sk-ant-test' })).toEqual([]);
  });

  it('should name the variable the node\'s apiKeyEnv names', () => {
    const flow = exampleFlow('openai-agent', (f) => (configOf(f, 'model').apiKeyEnv = 'TEAM_OPENAI_KEY'));
    const [warning] = environmentWarnings(flow, { REDFLOW_MODEL: 'gpt-4o-mini', OPENAI_API_KEY: 'sk-not-this-one' });
    expect(warning?.message).toContain('$TEAM_OPENAI_KEY');
    expect(environmentWarnings(flow, { REDFLOW_MODEL: 'gpt-4o-mini', TEAM_OPENAI_KEY: 'sk-team' })).toEqual([]);
  });

  it('should warn about both a missing model name and a missing key', () => {
    const warnings = environmentWarnings(exampleFlow('openai-agent'), {});
    expect(warnings.map((w) => w.code)).toEqual([ErrorCode.ENV_NOT_SET, ErrorCode.ENV_NOT_SET]);
    expect(warnings[0]?.message).toContain('REDFLOW_MODEL');
    expect(warnings[1]?.message).toContain('OPENAI_API_KEY');
  });

  it('should not warn when the key is set, for a local server (no key is sent there), or for a scripted model', () => {
    expect(environmentWarnings(exampleFlow('openai-agent'), { REDFLOW_MODEL: 'gpt-4o-mini', OPENAI_API_KEY: 'sk-test' })).toEqual([]);
    expect(environmentWarnings(exampleFlow('openai-agent'), { REDFLOW_MODEL: 'llama3.1', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' })).toEqual([]);
    const ollama = exampleFlow('openai-agent', (f) => Object.assign(configOf(f, 'model'), { provider: 'ollama', model: 'llama3.1' }));
    expect(environmentWarnings(ollama, {})).toEqual([]);
    expect(environmentWarnings(exampleFlow('order-status'), {})).toEqual([]);
  });

  it('should warn ENV_NOT_SET for a tool.postgres without its connection string, and not once it has one', () => {
    const flow = exampleFlow('postgres-orders');
    const warnings = environmentWarnings(flow, { DATABASE_URL: '' });
    expect(warnings).toEqual([expect.objectContaining({ code: ErrorCode.ENV_NOT_SET, nodeId: 'orders', path: 'nodes[3].config' })]);
    expect(warnings[0]?.message).toContain("tool.postgres 'orders'");
    expect(warnings[0]?.message).toContain('$DATABASE_URL');
    expect(warnings[0]?.hint).toContain('export DATABASE_URL=');
    expect(environmentWarnings(flow, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' })).toEqual([]);
    const ownVariable = exampleFlow('postgres-orders', (f) => (configOf(f, 'orders').connectionStringEnv = 'ORDERS_DB'));
    expect(environmentWarnings(ownVariable, { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' })[0]?.message).toContain('$ORDERS_DB');
    const inline = exampleFlow('postgres-orders', (f) => (configOf(f, 'orders').connectionString = 'postgres://postgres@127.0.0.1:5432/test'));
    expect(environmentWarnings(inline, {})).toEqual([]);
  });
});

describe('buildTools without a connection string', () => {
  const plan = planRun(exampleFlow('postgres-orders'), path.join(EXAMPLES, 'postgres-orders'));

  it('should refuse to build a tool.postgres to serve with TOOL_CONFIG_INVALID, before any call', async () => {
    const refused = await buildTools(plan, { env: {} }).then(
      () => undefined,
      (error: unknown) => error as RedflowError,
    );
    expect(refused?.code).toBe(ErrorCode.TOOL_CONFIG_INVALID);
    expect(refused?.message).toContain('DATABASE_URL is not set');
  });

  it('should still give its spec to a core worker, which never connects', async () => {
    const specs = await allowedToolSpecs(plan, { env: {} });
    expect(specs.map((spec) => spec.name)).toEqual(['order_lookup']);
  });
});
