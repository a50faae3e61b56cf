// What a flow needs from the environment, over real sockets: `POST /api/validate` and saving warn
// ENV_NOT_SET, and `POST /api/runs` refuses at once (400) a run that would miss its model's key or
// its database, leaving no run behind.
import { readdir } from 'node:fs/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FlowSavedResponse, RunListResponse, ValidationResponse } from '../../src/server/apiTypes.js';
import { answer, call, scriptedFlow, startTestServer, tempDirs, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(() => dirs.cleanup());

/** The harness's flow with its model on OpenAI's API (whose key is `$OPENAI_API_KEY`). */
function openAiFlow() {
  const flow = scriptedFlow([answer.final('x')]);
  return { ...flow, nodes: flow.nodes.map((n) => (n.id === 'model' ? { ...n, config: { provider: 'openai', model: 'gpt-4o-mini' } } : n)) };
}

/** The harness's flow with a tool.postgres taking its connection string from `$DATABASE_URL`. */
function postgresFlow() {
  const flow = scriptedFlow([answer.final('x')]);
  const lookup = {
    id: 'orders',
    type: 'tool.postgres',
    config: {
      name: 'order_lookup',
      query: 'select 1 as one where :id <> \'\'',
      inputSchema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
    },
  };
  return {
    ...flow,
    nodes: [
      ...flow.nodes
        .filter((n) => n.id !== 'gate')
        .map((n) => (n.id === 'agent' ? { ...n, config: { strategy: 'react', maxIterations: 5, allowedTools: ['order_lookup'] } } : n)),
      lookup,
    ],
    edges: [...flow.edges.filter((e) => e.target !== 'gate'), { id: 'e4', source: 'agent', target: 'orders' }],
  };
}

const envWarnings = (validation: ValidationResponse) => validation.warnings.filter((w) => w.code === 'ENV_NOT_SET');

describe('a flow needing what the server\'s environment lacks', () => {
  it('should warn ENV_NOT_SET at validate and save, naming the node and the variable, and stay valid', async () => {
    t = await startTestServer(dirs, { env: {} });
    const checked = await call(t.server, 'POST', '/api/validate', { body: openAiFlow() });
    expect(checked.status).toBe(200);
    const validation = checked.json as ValidationResponse;
    expect(validation.ok).toBe(true);
    expect(envWarnings(validation)).toEqual([expect.objectContaining({ severity: 'warning', nodeId: 'model' })]);
    expect(envWarnings(validation)[0]?.message).toContain('$OPENAI_API_KEY');
    expect(envWarnings(validation)[0]?.hint).toContain('export OPENAI_API_KEY=');

    const saved = await call(t.server, 'PUT', '/api/flows/orders', { body: postgresFlow() });
    expect(saved.status).toBe(201);
    const onSave = (saved.json as FlowSavedResponse).validation;
    expect(envWarnings(onSave)).toEqual([expect.objectContaining({ nodeId: 'orders' })]);
    expect(envWarnings(onSave)[0]?.message).toContain('$DATABASE_URL');
  });

  it('should not warn when the server\'s environment has what the flow needs', async () => {
    t = await startTestServer(dirs, { env: { OPENAI_API_KEY: 'sk-test', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' } });
    for (const flow of [openAiFlow(), postgresFlow()]) {
      const validation = (await call(t.server, 'POST', '/api/validate', { body: flow })).json as ValidationResponse;
      expect(validation.ok).toBe(true);
      expect(envWarnings(validation)).toEqual([]);
    }
  });

  it('should refuse to start the run with 400 MODEL_KEY_MISSING or TOOL_CONFIG_INVALID, leaving no run behind', async () => {
    t = await startTestServer(dirs, { env: {} });
    const server = t.server;
    expect((await call(server, 'PUT', '/api/flows/openai', { body: openAiFlow() })).status).toBe(201);
    expect((await call(server, 'PUT', '/api/flows/orders', { body: postgresFlow() })).status).toBe(201);

    const noKey = await call(server, 'POST', '/api/runs', { body: { flow: 'openai', input: 'x' } });
    expect(noKey.status, noKey.text).toBe(400);
    expect(noKey.error?.code).toBe('MODEL_KEY_MISSING');
    expect(noKey.error?.message).toContain('$OPENAI_API_KEY');
    expect(noKey.error?.hint).toContain('export OPENAI_API_KEY=');

    const noDatabase = await call(server, 'POST', '/api/runs', { body: { flow: 'orders', input: 'x' } });
    expect(noDatabase.status, noDatabase.text).toBe(400);
    expect(noDatabase.error?.code).toBe('TOOL_CONFIG_INVALID');
    expect(noDatabase.error?.message).toContain('DATABASE_URL is not set');

    expect(((await call(server, 'GET', '/api/runs')).json as RunListResponse).runs).toEqual([]);
    expect(await readdir(t.runsDir).catch(() => [])).toEqual([]);
  });
});
