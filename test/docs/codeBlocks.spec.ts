// Every TypeScript block of the documentation (README.md and docs/*.md) compiles against the
// package's source as written, and every one followed by the output it prints prints exactly that.
// A page's blocks are files of one folder, so a block importing another (`./order-desk.js`) finds
// it by the name its first line gives (`// order-desk.ts`).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, codeBlocks, docPages, entrySources, fileNameOf, fromSource, readPage, shownOutput, type CodeBlock } from './docPages.js';

const run = promisify(execFile);

interface PageBlocks {
  readonly page: string;
  readonly dir: string;
  readonly files: { block: CodeBlock; file: string; output: string | undefined }[];
}

let dir: string;
const pages: PageBlocks[] = [];

beforeAll(async () => {
  // Inside the repository, so that the blocks' other imports (zod) resolve from its node_modules.
  dir = await mkdtemp(path.join(ROOT, 'test-artifacts-doc-blocks-'));
  for (const page of docPages()) {
    const text = readPage(page);
    const blocks = codeBlocks(text);
    const ts = blocks.filter((block) => block.lang === 'ts');
    if (ts.length === 0) continue;
    const pageDir = path.join(dir, page.replace(/[/.]/g, '_'));
    const files = ts.map((block) => ({ block, file: path.join(pageDir, fileNameOf(block) ?? `block-${block.line}.ts`), output: shownOutput(text, block, blocks) }));
    await run('mkdir', ['-p', pageDir]);
    for (const { block, file } of files) await writeFile(file, block.code);
    pages.push({ page, dir: pageDir, files });
  }
  // Compiled as the package's own code is, the entry points mapped to their source.
  const paths = Object.fromEntries(Object.entries(entrySources()).map(([name, file]) => [name, [file]]));
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ extends: path.join(ROOT, 'tsconfig.json'), compilerOptions: { noEmit: true, rootDir: ROOT, paths }, include: ['**/*.ts', path.join(ROOT, 'src/types/*.d.ts')], exclude: [] }));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the code blocks of the documentation', () => {
  it('should be found: the README and the pages have TypeScript blocks, some with their output', () => {
    expect(pages.map((page) => page.page)).toEqual(expect.arrayContaining(['README.md', 'docs/agent-definitions.md', 'docs/library.md']));
    expect(pages.flatMap((page) => page.files).filter((file) => file.output !== undefined).length).toBeGreaterThanOrEqual(3);
  });

  it('should each compile as written', async () => {
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    // Errors name the block's page and line: docs_flows_md/block-120.ts is docs/flows.md's block at line 120.
    expect(result).toBe('');
  }, 180_000);

  it('should print the output shown after it, when one is shown', async () => {
    const ran: string[] = [];
    for (const { page, dir: pageDir, files } of pages) {
      // The shown output is a scripted model's: a block against a real model server is run by its own test.
      for (const { block, file, output } of files) {
        if (output === undefined || /provider: 'openai'/.test(block.code)) continue;
        const runnable = `${file.replace(/\.m?ts$/, '')}.run.mts`;
        await writeFile(runnable, fromSource(block.code).replace(/from '\.\/([\w-]+)\.js'/g, "from './$1.ts'"));
        const { stdout } = await run(process.execPath, ['--import', 'tsx', runnable], { cwd: pageDir, timeout: 30_000 });
        expect(stdout, `${page}:${block.line}`).toBe(output);
        ran.push(`${page}:${block.line}`);
      }
    }
    expect(ran.length).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
