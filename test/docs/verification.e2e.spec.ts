import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { codeBlocks, readPage } from './docPages.js';

// docs/verification.md runs as written: its verified .agent.md validated, run (the first answer
// fails its verification, the revised one passes) and replayed step by step by the commands it shows.

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(REPO_ROOT, 'test-artifacts-verification-'));
  await cp(path.join(REPO_ROOT, 'examples/security-audit/tools'), path.join(dir, 'tools'), { recursive: true });
  await cp(path.join(REPO_ROOT, 'examples/security-audit/code'), path.join(dir, 'code'), { recursive: true });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the verification page (docs/verification.md)', () => {
  it('should run as written: the answer that fails its completeness check is revised, verified, and replayed with its checks', async () => {
    const blocks = codeBlocks(readPage('docs/verification.md'));
    const agent = blocks.find((block) => block.lang === 'markdown')?.code;
    const commands = blocks.find((block) => block.lang === 'sh')?.code ?? '';
    await writeFile(path.join(dir, 'verified-finder.agent.md'), agent as string);
    const lines = commands.trim().split('\n');
    expect(lines).toHaveLength(3);
    const results = [];
    for (const line of lines) results.push(await runCli(line.replace(/^redflow /, '').split(' '), { cwd: dir }));
    const [validate, run, replay] = results;
    expect(validate?.stdout.trim()).toBe('verified-finder.agent.md: valid');
    expect(run?.code, run?.stderr).toBe(0);
    expect(run?.stdout).toContain('No sanitization or escaping anywhere in the codebase');
    expect(replay?.code, replay?.stderr).toBe(0);
    expect(replay?.stdout).toContain('✖ completeness: the answer does not say where the search looked');
    expect(replay?.stdout).toContain('verification passed');
  });

  it('should show the verifier shape the validation takes', async () => {
    const { validateVerification } = await import('../../src/machines/verification.js');
    const shape = codeBlocks(readPage('docs/verification.md')).find((block) => block.lang === 'json')?.code ?? '';
    expect(validateVerification(shape)).toMatchObject({ ok: true, passed: false });
  });
});
