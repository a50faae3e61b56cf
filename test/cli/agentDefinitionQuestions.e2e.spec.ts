import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, readVerifiedLog, runCli } from '../support/cli.js';

// `redflow run <module>` of an agent definition whose model asks a person (request_info, then
// escalate) parks the run in its log and exits 3, as a flow's run does; `redflow answer <log>
// --text` loads the module again and runs it on. An answer that does not fit is refused (65) and
// changes nothing in the log; past `runConfig.waitTimeoutMs` the run ends escalate (exit 2).

/** A definition module that asks which order, then whether to refund it; its wait lasts `${WAIT}` ms. */
const MODULE = `export default {
  name: 'refund-desk',
  description: 'Refunds orders',
  promptConfig: { systemPrompt: 'You refund orders. Ask what you do not know.', query: 'Refund my order, please.' },
  modelConfig: {
    provider: 'scripted',
    answers: [
      { action: 'request_info', input: { question: 'Which order?' } },
      { action: 'escalate', input: { reason: 'over my limit', question: 'May I refund 120 EUR?' } },
      { action: 'final', message: 'Refunded 120 EUR for order A-7.', confidence: 0.95 },
    ],
  },
  runConfig: { maxTurns: 4, waitTimeoutMs: WAIT },
};
`;

let dir: string;
beforeAll(() => {
  if (!existsSync(path.join(REPO_ROOT, 'dist/cli/definitionRun.js'))) throw new Error('dist/ is not built: run `npx tsc -p tsconfig.build.json` first');
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(REPO_ROOT, 'test-artifacts-agent-questions-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeModule(waitMs: number): Promise<void> {
  await writeFile(path.join(dir, 'refund-desk.ts'), MODULE.replace('WAIT', String(waitMs)));
}

/** Runs the CLI in `dir`, and checks that a refusal (65) left the log as it was. */
async function refused(args: readonly string[], code: string): Promise<void> {
  const log = path.join(dir, 'run.jsonl');
  const before = await readFile(log, 'utf8');
  const result = await runCli(args, { cwd: dir });
  expect(result.code, result.stderr).toBe(65);
  expect(result.stderr).toContain(code);
  expect(await readFile(log, 'utf8')).toBe(before);
}

describe("redflow run of an agent definition whose model asks a person", () => {
  it('should park at each question (exit 3) and go on with redflow answer, refusing what does not fit', async () => {
    await writeModule(3_600_000);
    const run = await runCli(['run', 'refund-desk.ts', '--log', 'run.jsonl', '--trace-id', 'q1'], { cwd: dir });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(`waits for a person's answer to "Which order?"`);
    expect(run.stderr).toContain('redflow answer run.jsonl --text <answer>');

    // Not an approval, nor an answer to another question.
    await refused(['approve', 'run.jsonl'], 'RUN_NOT_WAITING');
    await refused(['answer', 'run.jsonl', '--text', 'A-7', '--key', 'q1:5'], 'WAIT_ANSWER_MISMATCH');

    const first = await runCli(['answer', 'run.jsonl', '--text', 'Order A-7'], { cwd: dir });
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain(`waits for a person's answer to "May I refund 120 EUR?"`);
    // The first question took its answer: giving it again is refused.
    await refused(['answer', 'run.jsonl', '--text', 'Order A-7', '--key', 'q1:1'], 'WAIT_ALREADY_ANSWERED');

    const second = await runCli(['answer', 'run.jsonl', '--text', 'Yes, refund it.', '--key', 'q1:2'], { cwd: dir });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toBe('Refunded 120 EUR for order A-7.');
    await refused(['answer', 'run.jsonl', '--text', 'again'], 'RUN_ALREADY_FINISHED');

    const { events } = await readVerifiedLog(path.join(dir, 'run.jsonl'));
    expect(events.filter((e) => e.type.startsWith('human.')).map((e) => [e.type, e.data.answer ?? e.data.question])).toEqual([
      ['human.requested', 'Which order?'],
      ['human.answered', 'Order A-7'],
      ['human.requested', 'May I refund 120 EUR?'],
      ['human.answered', 'Yes, refund it.'],
    ]);
  }, 90_000);

  it('should refuse an answer after the deadline with WAIT_EXPIRED (exit 65), the run ending escalate with the question', async () => {
    await writeModule(1);
    const run = await runCli(['run', 'refund-desk.ts', '--log', 'run.jsonl'], { cwd: dir });
    expect(run.code, run.stderr).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await runCli(['answer', 'run.jsonl', '--text', 'Order A-7', '--json'], { cwd: dir });
    // A late answer is the caller's data error (as `answer --help` says); the run takes the expiry.
    expect(late.code, late.stderr).toBe(65);
    expect(late.stderr).toContain('WAIT_EXPIRED');
    const { events } = await readVerifiedLog(path.join(dir, 'run.jsonl'));
    expect(events.map((e) => e.type)).not.toContain('human.answered');
    expect(events.at(-1)?.data.outcome).toMatchObject({
      status: 'escalate',
      reason: 'info_requested',
      question: { action: 'request_info', question: 'Which order?' },
      error: { code: 'HUMAN_ANSWER_MISSING' },
    });
  }, 90_000);
});
