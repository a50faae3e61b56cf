import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the README', () => {
  it('should give a library example that runs as written', async () => {
    const readme = await readFile(path.join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## As a library'));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    const dir = await mkdtemp(path.join(root, 'test-artifacts-readme-'));
    try {
      const file = path.join(dir, 'example.mts');
      await writeFile(file, (code as string).replace("from 'redflow'", `from ${JSON.stringify(path.join(root, 'src/index.ts'))}`));
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], { cwd: root });
      expect(stdout).toContain('2 + 3 = 5');
      expect(stdout).toContain('1 run.started');
      expect(stdout).toMatch(/sum: 5/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("should give a follow example that runs as written: the run's events, then the end", async () => {
    const readme = await readFile(path.join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## As a library'), readme.indexOf('## Agent definitions'));
    const code = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]).find((block) => block?.includes('.follow('));
    expect(code).toBeDefined();
    const dir = await mkdtemp(path.join(root, 'test-artifacts-readme-'));
    try {
      const file = path.join(dir, 'follow.mts');
      await writeFile(file, (code as string).replace("from 'redflow'", `from ${JSON.stringify(path.join(root, 'src/index.ts'))}`));
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], { cwd: root, timeout: 20_000 });
      const lines = stdout.trim().split('\n');
      expect(lines[0]).toBe('1 run.started');
      expect(lines.at(-1)).toMatch(/^\d+ run\.completed$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('should start with the install-and-demo command and the test command, both real scripts', async () => {
    const readme = await readFile(path.join(root, 'README.md'), 'utf8');
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock).toContain('npm install && npm run demo');
    expect(firstBlock).toContain('npm test');
    expect(pkg.scripts.demo).toBeDefined();
    expect(pkg.scripts['demo:http']).toBeDefined();
  });
});
