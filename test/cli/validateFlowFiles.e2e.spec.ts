// `redflow validate` checks the files a flow names as a run would open them: a tool module that
// does not exist fails validation (exit 65) with the code the run would give.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, redflow, tempDirs, writeIn } from './cliHarness.js';

const dirs = tempDirs();
beforeAll(assertBuilt);
afterAll(() => dirs.cleanup());

describe('redflow validate and the files a flow names', () => {
  it('should fail a flow whose tool module does not exist with TOOL_MODULE_INVALID on the node', async () => {
    const cwd = await dirs.make();
    await mkdir(path.join(cwd, 'flows'), { recursive: true });
    await writeIn(path.join(cwd, 'flows'), 'first.json', {
      id: 'first',
      nodes: [
        { id: 'in', type: 'trigger.input' },
        { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 2 } },
        { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [{ action: 'final', message: 'done', confidence: 0.9 }] } },
        { id: 'myTool', type: 'tool.module', config: { module: 'tools/myTool.ts' } },
      ],
      edges: [
        { id: 'e1', source: 'in', target: 'agent' },
        { id: 'e2', source: 'agent', target: 'model' },
        { id: 'e3', source: 'agent', target: 'myTool' },
      ],
    });
    const result = await redflow(['validate', 'flows/first.json', '--json'], { cwd });
    expect(result.code, result.stderr).toBe(65);
    const report = JSON.parse(result.stdout) as { ok: boolean; errors: { code: string; nodeId?: string; path?: string }[] };
    expect(report.ok).toBe(false);
    expect(report.errors.map((e) => [e.code, e.nodeId, e.path])).toEqual([['TOOL_MODULE_INVALID', 'myTool', 'nodes[3].config.module']]);
  });
});
