import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, mkdtemp, open, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fitStepContext } from '../../src/stepService/fitStepContext.js';
import type { ReactStepRequest } from '../../src/stepService/reactStepTypes.js';
import { gatherStepContext, renderContext } from '../../src/stepService/workspaceContext.js';

let base: string;
let workspace: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'redflow-workspace-'));
  workspace = path.join(base, 'workspace');
  await mkdir(path.join(workspace, 'src/components'), { recursive: true });
  await mkdir(path.join(workspace, '.redflow/pins'), { recursive: true });
  await writeFile(path.join(workspace, 'src/auth.js'), 'export function login() {}\n');
  await writeFile(path.join(workspace, 'src/components/Login.tsx'), 'export const Login = () => null;\n');
  await writeFile(path.join(workspace, 'src/big.txt'), 'x'.repeat(500));
  await writeFile(path.join(workspace, 'src/logo.png'), Buffer.from([0x89, 0x50, 0x00, 0x47]));
  await writeFile(path.join(workspace, '.redflow/pins/pinned-id-1.md'), 'Use bcrypt for passwords.');
  await writeFile(path.join(base, 'secret.txt'), 'TOP SECRET');
  await symlink(path.join(base, 'secret.txt'), path.join(workspace, 'src/escape.txt'));
  await symlink(path.join(base, 'secret.txt'), path.join(workspace, '.redflow/pins/evil'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const request = (extra: Partial<ReactStepRequest>): ReactStepRequest => ({
  session_id: 's1',
  user_query: 'How is authentication implemented?',
  conversation_history: [],
  llm_config: { modelName: 'gpt-4o' },
  ...extra,
});

describe('gatherStepContext', () => {
  it('reads tagged files and folders, pinned items and the focused file inside the workspace', async () => {
    const context = await gatherStepContext(
      request({
        explicit_context_paths: ['src/auth.js', '@folder src/components'],
        pinned_item_ids_to_include: ['pinned-id-1'],
        implicit_context: { last_focused_file_path: 'src/components/Login.tsx' },
        vector_search_results_to_include: [{ content: 'function hash() {}', file_path: 'src/hash.js', score: 0.9 }, 'plain chunk'],
      }),
      { root: workspace },
    );
    expect(context.notes).toEqual([]);
    expect(context.sections).toEqual([
      { kind: 'explicit', title: 'file src/auth.js', text: 'export function login() {}\n' },
      { kind: 'explicit', title: 'folder @folder src/components', text: 'Login.tsx' },
      { kind: 'pinned', title: 'pinned item pinned-id-1', text: 'Use bcrypt for passwords.' },
      { kind: 'implicit', title: 'file src/components/Login.tsx', text: 'export const Login = () => null;\n' },
      { kind: 'vector', title: 'search result from src/hash.js', text: 'function hash() {}' },
      { kind: 'vector', title: 'search result 2', text: 'plain chunk' },
    ]);
  });

  it('never reads outside the workspace, by path, by absolute path or by link, and says what it left out', async () => {
    const context = await gatherStepContext(
      request({
        explicit_context_paths: ['../secret.txt', path.join(base, 'secret.txt'), 'src/escape.txt', 'src/missing.js', 'src/logo.png'],
        pinned_item_ids_to_include: ['evil', 'nope'],
      }),
      { root: workspace },
    );
    expect(context.sections).toEqual([]);
    expect(context.notes).toEqual([
      '../secret.txt left out: outside the workspace',
      `${path.join(base, 'secret.txt')} left out: paths are relative to the workspace`,
      'src/escape.txt left out: outside the workspace',
      'src/missing.js left out: not found',
      'src/logo.png left out: a binary file',
      'pinned item evil left out: outside the workspace',
      'pinned item nope left out: not found',
    ]);
    expect(JSON.stringify(context)).not.toContain('TOP SECRET');
    // Notes name files as the client wrote them, never by where the server keeps them.
    expect(context.notes.join('\n')).not.toContain(workspace);
  });

  it('reads no file without a workspace, and cuts long files with a note', async () => {
    const none = await gatherStepContext(request({ explicit_context_paths: ['src/auth.js'] }), {});
    expect(none).toEqual({ sections: [], notes: ['1 file left out: the server has no workspace to read files from'] });
    const cut = await gatherStepContext(request({ explicit_context_paths: ['src/big.txt'] }), { root: workspace, maxFileBytes: 100 });
    expect(cut.sections[0]?.text).toHaveLength(100);
    expect(cut.notes).toEqual(['src/big.txt cut to its first 100 bytes']);
  });
});

describe('gatherStepContext and what is not a file', () => {
  it('answers at once for a named pipe in the workspace, which an ordinary open would wait on forever', async () => {
    const fifo = path.join(workspace, 'src/pipe');
    execFileSync('mkfifo', [fifo]);
    const gathered = gatherStepContext(request({ explicit_context_paths: ['src/pipe', 'src/auth.js'] }), { root: workspace });
    const late = new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 2000));
    const answer = await Promise.race([gathered, late]);
    // Without the fix the read waits for a writer: give it one, so the test's process can end.
    if (answer === 'waiting') await (await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK)).close();
    expect(answer).toMatchObject({ sections: [{ title: 'file src/auth.js' }], notes: ['src/pipe left out: not a file'] });
  });
});

describe('fitStepContext', () => {
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

  it('leaves out search results first, then the focused file, pins and tagged files, saying so', async () => {
    const context = {
      sections: [
        { kind: 'explicit' as const, title: 'file a.js', text: 'one two three' },
        { kind: 'pinned' as const, title: 'pinned item p', text: 'four five' },
        { kind: 'vector' as const, title: 'search result 1', text: 'lorem '.repeat(20).trim() },
      ],
      notes: [],
    };
    const all = words(renderContext(context) ?? '');
    const fitted = fitStepContext(context, all - 3, words);
    expect(fitted.sections.map((s) => s.title)).toEqual(['file a.js', 'pinned item p']);
    expect(fitted.notes).toEqual(['search result 1 left out to fit the context window']);
    const tight = fitStepContext(context, 20, words);
    expect(tight.sections).toEqual([]);
    expect(fitStepContext(context, all, words)).toBe(context);
  });
});
