import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { readPage } from './docPages.js';

// docs/agent-definitions.md runs as written: its module (zod schemas, `defineTool` and
// `defineAgent` from 'redflow', which a module in this repository resolves to the built package),
// its scripts (the output each shows is the output it prints), and its `redflow run` and
// `redflow resume` commands; then a question to a person, parked and answered in code and with
// `redflow run` and `redflow answer`.

async function section(): Promise<string> {
  const page = readPage('docs/agent-definitions.md');
  expect(page.startsWith('# Agent definitions\n')).toBe(true);
  return page;
}

/** The fenced blocks of `text` in the language `lang` ('' for a bare fence). */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].filter((m) => m[1] === lang).map((m) => m[2] as string);
}

describe("the agent definitions page (docs/agent-definitions.md)", () => {
  it('should run as written: the module with redflow run and resume, the script printing what the page shows', async () => {
    const text = await section();
    const [moduleCode, scriptCode, waitsCode, questionCode, askCode] = blocks(text, 'ts');
    const [shown, waitsShown, askShown] = blocks(text, '');
    const [commands, questionCommands] = blocks(text, 'sh');
    expect(moduleCode).toContain('// order-desk.ts');
    expect(scriptCode).toContain('// run-order-desk.ts');
    expect(waitsCode).toContain('// refund-desk.ts');
    expect(questionCode).toContain('// question-desk.ts');
    expect(askCode).toContain('// ask-and-answer.ts');
    const dir = await mkdtemp(path.join(REPO_ROOT, 'test-artifacts-doc-agents-'));
    try {
      await writeFile(path.join(dir, 'order-desk.ts'), moduleCode as string);
      const script = (scriptCode as string).replace("from 'redflow'", `from ${JSON.stringify(path.join(REPO_ROOT, 'src/index.ts'))}`);
      await writeFile(path.join(dir, 'run-order-desk.ts'), script);
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'run-order-desk.ts'], { cwd: dir });
      expect(stdout).toBe(shown);
      // The tools that wait: parked twice (the client's result, then the approval), then done.
      await writeFile(path.join(dir, 'refund-desk.ts'), (waitsCode as string).replace("from 'redflow'", `from ${JSON.stringify(path.join(REPO_ROOT, 'src/index.ts'))}`));
      const waits = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'refund-desk.ts'], { cwd: dir });
      expect(waits.stdout).toBe(waitsShown);
      // The question to a person: parked, then answered by a resume in the same script.
      await writeFile(path.join(dir, 'question-desk.ts'), questionCode as string);
      await writeFile(path.join(dir, 'ask-and-answer.ts'), (askCode as string).replace("from 'redflow'", `from ${JSON.stringify(path.join(REPO_ROOT, 'src/index.ts'))}`));
      const asked = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'ask-and-answer.ts'], { cwd: dir });
      expect(asked.stdout).toBe(askShown);

      // The commands, as the page gives them (npx redflow is bin/redflow.js here).
      const [runLine, resumeLine] = (commands as string).split('\n');
      expect(runLine).toMatch(/^npx redflow run order-desk\.ts --input '\{"customer": "Ada", "order": "A-1001"\}'/);
      expect(resumeLine).toMatch(/^npx redflow resume \.redflow\/runs\/<traceId>\.jsonl/);
      const run = await runCli(['run', 'order-desk.ts', '--input', '{"customer": "Ada", "order": "A-1001"}'], { cwd: dir });
      expect(run.stderr).not.toContain('error');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ order: 'A-1001', status: 'shipped' });
      const log = /log: (\S+)/.exec(run.stderr)?.[1] as string;
      expect(log).toMatch(/^\.redflow\/runs\/.+\.jsonl$/);
      const resumed = await runCli(['resume', log], { cwd: dir });
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toBe(run.stdout);

      // The question's commands: the run parks (exit 3), and redflow answer on its log ends it.
      const [askLine, answerLine] = (questionCommands as string).split('\n');
      expect(askLine).toMatch(/^npx redflow run question-desk\.ts +# exits 3/);
      expect(answerLine).toMatch(/^npx redflow answer \.redflow\/runs\/<traceId>\.jsonl --text "Order A-1001" +# .*exits 0/);
      const waiting = await runCli(['run', 'question-desk.ts'], { cwd: dir });
      expect(waiting.code, waiting.stderr).toBe(3);
      expect(waiting.stderr).toContain(`waits for a person's answer to "Which order should I refund?"`);
      const questionLog = /redflow answer (\S+\.jsonl) --text/.exec(waiting.stderr)?.[1] as string;
      expect(questionLog).toMatch(/^\.redflow\/runs\/.+\.jsonl$/);
      const answered = await runCli(['answer', questionLog, '--text', 'Order A-1001'], { cwd: dir });
      expect(answered.code, answered.stderr).toBe(0);
      expect(answered.stdout.trim()).toBe('Refunded order A-1001.');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
