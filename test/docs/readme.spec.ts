import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatCompletionsServer, stopFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { ROOT, codeBlocks, fromSource, readPage, section, shownOutput } from './docPages.js';

// The README's front page: its agent in code runs as written against a local server speaking the
// Chat Completions wire protocol (the model's base URL and key from the environment, as the README
// says), and its first commands are the package's real scripts.

let server: FakeChatServer;

beforeAll(async () => {
  server = await startFakeChatCompletionsServer();
});

afterAll(async () => {
  await stopFakeChatCompletionsServer(server);
});

describe('the README', () => {
  it('should give an agent in code that runs as written against an OpenAI-compatible server, printing what it shows', async () => {
    const text = section('README.md', '## An agent in code');
    const blocks = codeBlocks(text);
    const agent = blocks.find((block) => block.lang === 'ts');
    expect(agent?.code).toContain('// agent.ts');
    expect(agent?.code).toContain("provider: 'openai'");
    expect(agent?.code.trim().split('\n').length).toBeLessThanOrEqual(20);
    const shown = shownOutput(text, agent!, blocks);
    expect(shown).toBe('12.5 + 8 = 20.5\n');
    // The model's answers in the format Redflow asks for: a call of add, then the final answer.
    server.enqueue(
      { kind: 'completion', content: JSON.stringify({ action: 'tool', tool: 'add', input: { a: 12.5, b: 8 }, confidence: 0.9 }) },
      { kind: 'completion', content: JSON.stringify({ action: 'final', message: '12.5 + 8 = 20.5', confidence: 0.95 }) },
    );
    const dir = await mkdtemp(path.join(ROOT, 'test-artifacts-readme-'));
    try {
      await writeFile(path.join(dir, 'agent.mts'), fromSource(agent!.code));
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'agent.mts'], {
        cwd: dir,
        timeout: 30_000,
        env: { ...process.env, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-readme-test-key-0123456789', REDFLOW_MODEL: 'gpt-4o-mini' },
      });
      expect(stdout).toBe(shown);
      // Two real requests over HTTP: the key sent as the README says, the tool's result in the second.
      expect(server.requests.map((request) => request.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
      expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-readme-test-key-0123456789');
      expect(JSON.stringify(server.requests[1]?.body)).toContain('20.5');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('should start with the install-and-demo command, a real script, and say what the demo runs', async () => {
    const readme = readPage('README.md');
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const firstBlock = codeBlocks(readme).find((block) => block.lang === 'sh')?.code ?? '';
    expect(firstBlock).toContain('npm install && npm run demo');
    expect(firstBlock).toContain('npm run demo:editor');
    expect(pkg.scripts['demo:editor']).toBeDefined();
    // The demo's command as the README spells it is the script's.
    const command = /npx redflow run (examples\/order-status\/flow\.json --input "[^"]+")/.exec(readme)?.[1];
    expect(command).toBeDefined();
    expect(pkg.scripts.demo).toBe(`node bin/redflow.js run ${command}`);
  });

  it('should stay a front page: at most 15 KB, one picture, the test suite’s services left to docs/testing.md', () => {
    const readme = readPage('README.md');
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(15 * 1024);
    expect([...readme.matchAll(/!\[/g)]).toHaveLength(1);
    expect(readme).not.toContain('nats-server');
    expect(readPage('docs/testing.md')).toContain('npm test');
  });
});
