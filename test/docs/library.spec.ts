import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, codeBlocks, fromSource, readPage } from './docPages.js';

// docs/library.md's examples run as written: a run with a tool, and a run followed through its log.

/** Runs a TypeScript block with tsx from a folder of the repository; its stdout. */
async function runBlock(code: string, name: string): Promise<string> {
  const dir = await mkdtemp(path.join(ROOT, 'test-artifacts-library-'));
  try {
    await writeFile(path.join(dir, name), fromSource(code));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(dir, name)], { cwd: ROOT, timeout: 20_000 });
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const blocks = codeBlocks(readPage('docs/library.md')).filter((block) => block.lang === 'ts');

describe('Redflow as a library (docs/library.md)', () => {
  it('should give an example that runs as written', async () => {
    const code = blocks[0]?.code;
    expect(code).toBeDefined();
    const stdout = await runBlock(code as string, 'example.mts');
    expect(stdout).toContain('2 + 3 = 5');
    expect(stdout).toContain('1 run.started');
    expect(stdout).toMatch(/sum: 5/);
  });

  it("should give a follow example that runs as written: the run's events, then the end", async () => {
    const code = blocks.find((block) => block.code.includes('.follow('))?.code;
    expect(code).toBeDefined();
    const lines = (await runBlock(code as string, 'follow.mts')).trim().split('\n');
    expect(lines[0]).toBe('1 run.started');
    expect(lines.at(-1)).toMatch(/^\d+ run\.completed$/);
  });
});
