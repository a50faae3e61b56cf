// The command line and the files a flow names: by default only the flow file's own folder tree;
// `--allow-files <dir>` adds a folder. A refusal is exit 65 with FLOW_FILE_OUTSIDE_ROOTS before
// anything is imported, read or written.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { NATS_URL, uniquePrefix } from '../nats/natsSupport.js';
import { assertBuilt, redflow, tempDirs } from './cliHarness.js';

const dirs = tempDirs();
beforeAll(assertBuilt);
afterAll(() => dirs.cleanup());

/** `cwd/flows/esc.json` naming `../outside/evil.mjs` (which leaves a mark when imported) and a memory store in `../outside/written`. */
async function escapingFlow(): Promise<{ cwd: string; outside: string }> {
  const cwd = await dirs.make();
  const outside = path.join(cwd, 'outside');
  await mkdir(outside, { recursive: true });
  await mkdir(path.join(cwd, 'flows'), { recursive: true });
  await writeFile(
    path.join(outside, 'evil.mjs'),
    `import { writeFileSync } from 'node:fs';
writeFileSync(new URL('./IMPORTED', import.meta.url), 'evil.mjs ran');
export default { name: 'evil', description: 'd', inputSchema: { type: 'object' }, execute: () => ({}) };
`,
  );
  const flow = {
    id: 'esc',
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 2 } },
      { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: [{ action: 'final', message: 'done', confidence: 0.9 }] } },
      { id: 'evil', type: 'tool.module', config: { module: '../outside/evil.mjs' } },
      { id: 'mem', type: 'memory.kv', config: { store: 'file', path: '../outside/written' } },
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'evil' },
      { id: 'e4', source: 'agent', target: 'mem' },
    ],
  };
  await writeFile(path.join(cwd, 'flows', 'esc.json'), JSON.stringify(flow, null, 2));
  return { cwd, outside };
}

describe.concurrent('files a flow names, from the command line', () => {
  it('should refuse to run a flow naming files outside its folder: exit 65, nothing imported or written, no log', async ({ expect }) => {
    const { cwd, outside } = await escapingFlow();
    const result = await redflow(['run', 'flows/esc.json', '--conversation', 'c1', '--input', 'hi'], { cwd });
    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).toContain('FLOW_FILE_OUTSIDE_ROOTS nodes[3].config.module');
    expect(result.stderr).toContain('FLOW_FILE_OUTSIDE_ROOTS nodes[4].config.path');
    expect(result.stderr).toContain('--allow-files');
    expect(existsSync(path.join(outside, 'IMPORTED'))).toBe(false);
    expect(existsSync(path.join(outside, 'written'))).toBe(false);
    expect(existsSync(path.join(cwd, '.redflow'))).toBe(false);
  });

  it('should report the refused files when validating (exit 65), and find the flow valid with --allow-files', async ({ expect }) => {
    const { cwd } = await escapingFlow();
    const refused = await redflow(['validate', 'flows/esc.json', '--json'], { cwd });
    expect(refused.code, refused.stderr).toBe(65);
    const { errors } = JSON.parse(refused.stdout) as { errors: { code: string; nodeId: string }[] };
    expect(errors.map((e) => [e.code, e.nodeId])).toEqual([
      ['FLOW_FILE_OUTSIDE_ROOTS', 'evil'],
      ['FLOW_FILE_OUTSIDE_ROOTS', 'mem'],
    ]);
    const allowed = await redflow(['validate', 'flows/esc.json', '--allow-files', 'outside'], { cwd });
    expect(allowed.code, allowed.stdout).toBe(0);
  });

  it('should run the flow when its files are in a folder given with --allow-files', async ({ expect }) => {
    const { cwd, outside } = await escapingFlow();
    const result = await redflow(['run', 'flows/esc.json', '--conversation', 'c1', '--input', 'hi', '--allow-files', 'outside'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('done');
    expect(existsSync(path.join(outside, 'IMPORTED'))).toBe(true);
    expect(existsSync(path.join(outside, 'written', 'c1.json'))).toBe(true);
  });

  it('should refuse to host the flow on a worker (exit 65) before importing its tool module', async ({ expect }) => {
    const { cwd, outside } = await escapingFlow();
    const result = await redflow(['worker', 'flows/esc.json', '--role', 'tool', '--nats', NATS_URL, '--prefix', uniquePrefix()], { cwd });
    expect(result.code, result.stderr).toBe(65);
    expect(result.stderr).toContain('FLOW_FILE_OUTSIDE_ROOTS');
    expect(existsSync(path.join(outside, 'IMPORTED'))).toBe(false);
  });
});
