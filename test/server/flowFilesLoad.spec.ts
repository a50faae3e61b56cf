// A flow that names a file a run opens at its start (a tool module, a scripted answers file) is
// not valid while that file is missing or does not load: validation says so with the code the
// run would give, on the node and its field, instead of the run failing later.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ValidationResponse } from '../../src/server/apiTypes.js';
import { answer, call, startTestServer, tempDirs, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
beforeEach(async () => {
  t = await startTestServer(dirs);
  await mkdir(t.flowsDir, { recursive: true });
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

type Config = Record<string, unknown>;

/** trigger → agent → scripted model (`model` config) and one tool.module named `module`. */
function flowWithTool(module: string, model: Config = { provider: 'scripted', answers: [answer.final('done')] }) {
  return {
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 2 } },
      { id: 'model', type: 'model.llm', config: model },
      { id: 'lookup', type: 'tool.module', config: { module } },
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'lookup' },
    ],
  };
}

async function validate(body: unknown): Promise<ValidationResponse> {
  const answered = await call(t.server, 'POST', '/api/validate', { body });
  expect(answered.status).toBe(200);
  return answered.json as ValidationResponse;
}

describe('validating the files a flow names', () => {
  it('should report a tool module that does not exist as TOOL_MODULE_INVALID on the node and its module field', async () => {
    const validation = await validate(flowWithTool('tools/myTool.ts'));
    expect(validation.ok).toBe(false);
    expect(validation.errors).toEqual([
      expect.objectContaining({ code: 'TOOL_MODULE_INVALID', nodeId: 'lookup', path: 'nodes[3].config.module', severity: 'error' }),
    ]);
    expect(validation.errors[0]?.message).toContain('"tools/myTool.ts" does not exist');
  });

  it('should report a tool module that exists but is not a tool as TOOL_MODULE_INVALID', async () => {
    await writeFile(path.join(t.flowsDir, 'broken.mjs'), 'export const nothing = 1;\n');
    const validation = await validate(flowWithTool('broken.mjs'));
    expect(validation.errors.map((e) => [e.code, e.nodeId, e.path])).toEqual([['TOOL_MODULE_INVALID', 'lookup', 'nodes[3].config.module']]);
  });

  it('should report a scripted answers file that does not exist as ANSWERS_FILE_NOT_FOUND', async () => {
    await writeFile(path.join(t.flowsDir, 'tool.mjs'), "export default { name: 'lookup', description: 'd', inputSchema: { type: 'object' }, execute: () => ({}) };\n");
    const validation = await validate(flowWithTool('tool.mjs', { provider: 'scripted', answersFile: 'answers.json' }));
    expect(validation.errors.map((e) => [e.code, e.nodeId, e.path])).toEqual([['ANSWERS_FILE_NOT_FOUND', 'model', 'nodes[2].config.answersFile']]);
  });

  it('should pass a flow whose tool module exists and loads', async () => {
    await writeFile(path.join(t.flowsDir, 'tool.mjs'), "export default { name: 'lookup', description: 'd', inputSchema: { type: 'object' }, execute: () => ({}) };\n");
    const validation = await validate(flowWithTool('tool.mjs'));
    expect(validation).toMatchObject({ ok: true, errors: [] });
  });
});
