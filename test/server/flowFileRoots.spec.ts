// A flow saved through the API names files (tool modules, answers files, memory stores): none of
// them may be outside the folders the operator allows (the flows directory, --allow-files), and no
// answer may carry a file's content or a server path.
import { existsSync } from 'node:fs';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FlowListResponse, FlowSavedResponse, ValidationResponse } from '../../src/server/apiTypes.js';
import { answer, call, startTestServer, tempDirs, type TestServer } from './serverHarness.js';

const dirs = tempDirs();
let t: TestServer;
let outside: string;
beforeEach(async () => {
  t = await startTestServer(dirs);
  outside = path.join(t.root, 'outside');
  await mkdir(outside, { recursive: true });
  await mkdir(t.flowsDir, { recursive: true });
  // Its top-level code leaves a mark: importing it at all is the breach.
  await writeFile(
    path.join(outside, 'evil.mjs'),
    `import { writeFileSync } from 'node:fs';
writeFileSync(new URL('./IMPORTED', import.meta.url), 'evil.mjs ran');
export default { name: 'evil', description: 'd', inputSchema: { type: 'object' }, execute: () => ({}) };
`,
  );
  await writeFile(path.join(outside, 'answers.json'), JSON.stringify([answer.final('SECRET-ANSWER-TEXT')]));
  await writeFile(path.join(outside, 'notes.txt'), 'SECRET-NOTES-TEXT');
});
afterEach(() => t.close());
afterAll(() => dirs.cleanup());

type Config = Record<string, unknown>;

/** A flow with the given model config, one tool.module at `module`, and a memory.kv with `memory` config. */
function flowNaming(files: { module?: string; model?: Config; memory?: Config }) {
  return {
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 2 } },
      { id: 'model', type: 'model.llm', config: files.model ?? { provider: 'scripted', answers: [answer.final('done')] } },
      { id: 'tool', type: 'tool.module', config: { module: files.module ?? 'tool.mjs' } },
      ...(files.memory ? [{ id: 'mem', type: 'memory.kv', config: files.memory }] : []),
    ],
    edges: [
      { id: 'e1', source: 'in', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'tool' },
      ...(files.memory ? [{ id: 'e4', source: 'agent', target: 'mem' }] : []),
    ],
  };
}

/** A harmless tool module inside the flows directory. */
async function writeTool(dir = t.flowsDir): Promise<void> {
  await writeFile(path.join(dir, 'tool.mjs'), "export default { name: 'tool', description: 'd', inputSchema: { type: 'object' }, execute: () => ({}) };\n");
}

/**
 * Nothing of the server's file system or of the outside files shows in an answer; the reference
 * the client itself sent (`echo`, quoted in messages) does not count.
 */
function expectNothingLeaked(text: string, echo?: string): void {
  const quoted = echo === undefined ? undefined : JSON.stringify(JSON.stringify(echo)).slice(1, -1);
  const rest = quoted === undefined ? text : JSON.stringify(JSON.parse(text)).split(quoted).join('');
  expect(rest).not.toContain(t.root);
  expect(rest).not.toContain('SECRET-');
}

describe('files a flow names, through the API', () => {
  it('should save a flow reaching outside with validation.ok false, and refuse to run it before importing or writing anything', async () => {
    const esc = flowNaming({ module: '../outside/evil.mjs', memory: { store: 'file', path: '../outside/written' } });
    const saved = await call(t.server, 'PUT', '/api/flows/esc', { body: esc });
    expect(saved.status).toBe(201);
    const { validation } = saved.json as FlowSavedResponse;
    expect(validation.ok).toBe(false);
    expect(validation.errors.map((e) => [e.code, e.path])).toEqual([
      ['FLOW_FILE_OUTSIDE_ROOTS', 'nodes[3].config.module'],
      ['FLOW_FILE_OUTSIDE_ROOTS', 'nodes[4].config.path'],
    ]);
    expectNothingLeaked(saved.text);

    const listed = (await call(t.server, 'GET', '/api/flows')).json as FlowListResponse;
    expect(listed.flows.find((f) => f.id === 'esc')?.valid).toBe(false);

    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'esc', input: 'hi', conversationId: 'c1' } });
    expect(run.status).toBe(400);
    expect(run.error?.code).toBe('FLOW_FILE_OUTSIDE_ROOTS');
    expectNothingLeaked(run.text);
    expect(existsSync(path.join(outside, 'IMPORTED'))).toBe(false);
    expect(existsSync(path.join(outside, 'written'))).toBe(false);
    expect(existsSync(t.runsDir) ? await readdir(t.runsDir) : []).toEqual([]);
  });

  it('should refuse an answers file outside, without streaming or echoing its content', async () => {
    const flow = flowNaming({ model: { provider: 'scripted', answersFile: '../outside/answers.json' } });
    await writeTool();
    const saved = await call(t.server, 'PUT', '/api/flows/answers', { body: flow });
    expect((saved.json as FlowSavedResponse).validation.errors.map((e) => e.code)).toEqual(['FLOW_FILE_OUTSIDE_ROOTS']);
    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'answers', input: 'hi' } });
    expect(run.status).toBe(400);
    expect(run.error?.code).toBe('FLOW_FILE_OUTSIDE_ROOTS');
    expectNothingLeaked(run.text);
  });

  it('should not quote an answers file that is not JSON, nor name its absolute path', async () => {
    await writeTool();
    await writeFile(path.join(t.flowsDir, 'notes.json'), 'SECRET-NOTES-TEXT, not JSON');
    await call(t.server, 'PUT', '/api/flows/notes-model', { body: flowNaming({ model: { provider: 'scripted', answersFile: 'notes.json' } }) });
    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'notes-model', input: 'hi' } });
    expect(run.status).toBe(400);
    expect(run.error?.code).toBe('MODEL_CONFIG_INVALID');
    expect(run.error?.message).toContain('"notes.json"');
    expectNothingLeaked(run.text);
  });

  it.each([
    ['an absolute path outside', () => path.join(outside, 'evil.mjs')],
    ['a file: URL', () => pathToFileURL(path.join(outside, 'evil.mjs')).href],
    ['a data: URL', () => `data:text/javascript,${encodeURIComponent("import('node:fs').then((fs) => fs.writeFileSync('x', 'y'))")}`],
    ['a node: builtin', () => 'node:child_process'],
    ['Windows separators', () => '..\\outside\\evil.mjs'],
    ['a symbolic link to a file outside', () => 'linked-evil.mjs'],
    ['a symbolically linked folder leading outside', () => 'linked-dir/evil.mjs'],
    ['a folder under a linked parent', () => 'linked-dir/sub/../evil.mjs'],
    ['a link that leads nowhere', () => 'dangling.mjs'],
  ])('should refuse %s as a tool module', async (_name, reference) => {
    const module = reference();
    await symlink(path.join(outside, 'evil.mjs'), path.join(t.flowsDir, 'linked-evil.mjs'));
    await symlink(outside, path.join(t.flowsDir, 'linked-dir'));
    await symlink(path.join(t.root, 'nowhere.mjs'), path.join(t.flowsDir, 'dangling.mjs'));
    const flow = flowNaming({ module });
    const checked = await call(t.server, 'POST', '/api/validate', { body: flow });
    const validation = checked.json as ValidationResponse;
    expect(validation.ok).toBe(false);
    expect(validation.errors.map((e) => e.code)).toEqual(['FLOW_FILE_OUTSIDE_ROOTS']);
    expectNothingLeaked(checked.text, module);
    await call(t.server, 'PUT', '/api/flows/sneaky', { body: flow });
    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'sneaky', input: 'hi' } });
    expect(run.status).toBe(400);
    expect(run.error?.code).toBe('FLOW_FILE_OUTSIDE_ROOTS');
    expectNothingLeaked(run.text, module);
    expect(existsSync(path.join(outside, 'IMPORTED'))).toBe(false);
  });

  it('should refuse a memory store in a folder that does not exist yet, judged by its nearest existing folder (a link out)', async () => {
    await writeTool();
    await symlink(outside, path.join(t.flowsDir, 'memories'));
    const flow = flowNaming({ memory: { store: 'file', path: 'memories/not/yet' } });
    const saved = await call(t.server, 'PUT', '/api/flows/mem', { body: flow });
    expect((saved.json as FlowSavedResponse).validation.errors.map((e) => e.code)).toEqual(['FLOW_FILE_OUTSIDE_ROOTS']);
    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'mem', input: 'hi', conversationId: 'c1' } });
    expect(run.status).toBe(400);
    expect(existsSync(path.join(outside, 'not'))).toBe(false);
  });

  it('should accept files inside the flows directory, from a flow in a subfolder, and run it', async () => {
    await mkdir(path.join(t.flowsDir, 'tools'), { recursive: true });
    await writeTool(path.join(t.flowsDir, 'tools'));
    await writeFile(path.join(t.flowsDir, 'answers.json'), JSON.stringify([answer.final('from the file')]));
    const flow = flowNaming({
      module: '../tools/tool.mjs',
      model: { provider: 'scripted', answersFile: path.join(t.flowsDir, 'answers.json') },
      memory: { store: 'file', path: '../.memory' },
    });
    const saved = await call(t.server, 'PUT', '/api/flows/team/inside', { body: flow });
    expect((saved.json as FlowSavedResponse).validation).toMatchObject({ ok: true, errors: [] });
    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'team/inside', input: 'hi', conversationId: 'c1' } });
    expect(run.status, run.text).toBe(201);
  });

  it('should accept a folder given with allowFiles', async () => {
    await t.close();
    t = await startTestServer(dirs, { allowFiles: [outside] });
    await writeFile(path.join(outside, 'evil.mjs'), "export default { name: 'tool', description: 'd', inputSchema: { type: 'object' }, execute: () => ({}) };\n");
    await mkdir(t.flowsDir, { recursive: true });
    const saved = await call(t.server, 'PUT', '/api/flows/allowed', { body: flowNaming({ module: path.join(outside, 'evil.mjs') }) });
    expect((saved.json as FlowSavedResponse).validation.ok).toBe(true);
    const run = await call(t.server, 'POST', '/api/runs', { body: { flow: 'allowed', input: 'hi' } });
    expect(run.status, run.text).toBe(201);
  });
});
