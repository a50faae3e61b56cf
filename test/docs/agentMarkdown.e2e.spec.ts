import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, readVerifiedLog, runCli } from '../support/cli.js';
import { readPage } from './docPages.js';

// docs/agent-markdown.md runs as written: its .agent.md file with the page's validate, run and
// replay commands; then the security-audit example end to end with `node bin/redflow.js run`.

const EXAMPLE = path.join(REPO_ROOT, 'examples/security-audit');
let dir: string;

/** The fenced blocks of `text` in the language `lang`. */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].filter((m) => m[1] === lang).map((m) => m[2] as string);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(REPO_ROOT, 'test-artifacts-agent-md-'));
  await cp(path.join(EXAMPLE, 'tools'), path.join(dir, 'tools'), { recursive: true });
  await cp(path.join(EXAMPLE, 'code'), path.join(dir, 'code'), { recursive: true });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the agents-as-Markdown page (docs/agent-markdown.md)', () => {
  it('should run as written: its .agent.md validated, run and replayed by the commands it shows', async () => {
    const page = readPage('docs/agent-markdown.md');
    const [agent] = blocks(page, 'markdown');
    const [commands] = blocks(page, 'sh');
    await writeFile(path.join(dir, 'mitigation-finder.agent.md'), agent as string);
    const lines = (commands as string).trim().split('\n');
    expect(lines).toHaveLength(3);
    const [validate, run, replay] = await lines.reduce<Promise<Awaited<ReturnType<typeof runCli>>[]>>(async (done, line) => {
      const results = await done;
      return [...results, await runCli(line.replace(/^redflow /, '').split(' '), { cwd: dir })];
    }, Promise.resolve([]));
    expect(validate?.stdout.trim()).toBe('mitigation-finder.agent.md: valid');
    expect(validate?.code).toBe(0);
    expect(run?.code, run?.stderr).toBe(0);
    expect(run?.stdout).toContain('No sanitization or escaping anywhere');
    expect(replay?.code).toBe(0);
    expect(replay?.stdout).toContain('done (final_answer)');
  });

  it('should refuse a bad file with its code and line: an action that names no tool', async () => {
    const page = readPage('docs/agent-markdown.md');
    const [agent] = blocks(page, 'markdown');
    await writeFile(path.join(dir, 'bad.agent.md'), (agent as string).replace('- `search`: look', '- `grep`: look'));
    const result = await runCli(['validate', 'bad.agent.md', '--json'], { cwd: dir });
    expect(result.code).toBe(65);
    const report = JSON.parse(result.stdout) as { ok: boolean; errors: { code: string; path: string }[] };
    expect(report.errors[0]).toMatchObject({ code: 'AGENT_MARKDOWN_INVALID', path: 'bad.agent.md:24' });
  });
});

describe('the security-audit example', () => {
  it('should find the three vulnerabilities in two iterations, and its log replay', async () => {
    const log = path.join(dir, 'audit.jsonl');
    const run = await runCli(['run', path.join(EXAMPLE, 'security-audit.agent.md'), '--log', log, '--json'], { cwd: REPO_ROOT });
    expect(run.code, run.stderr).toBe(0);
    const { events } = await readVerifiedLog(log);
    const calls = events.filter((event) => event.type === 'tool.requested').map((event) => (event.data as { tool: string; input: unknown }));
    expect(calls).toEqual([
      expect.objectContaining({ tool: 'analyze', input: { target: 'code', focus: 'security_patterns' } }),
      expect.objectContaining({ tool: 'search', input: { query: 'sanitize|escape|prepared|CSP', scope: 'full_codebase' } }),
    ]);
    const observations = events.filter((event) => event.type === 'tool.completed').map((event) => JSON.stringify(event.data));
    expect(observations[0]).toMatch(/"line":12.*"line":34.*"line":45/);
    expect(observations[1]).toContain('"count":0');
    const replay = await runCli(['replay', log], { cwd: REPO_ROOT });
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain('done (final_answer)');
    expect(replay.stdout).toMatch(/"line":12.*"line":34.*"line":45/);
  });
});
