import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, readVerifiedLog, runCli } from '../support/cli.js';

// `redflow run <module>` of an agent definition whose tools wait (a refund that requires approval,
// a question the client answers) parks the run in its log and exits 3; `redflow approve`, `deny`
// and `tool-result` on that log load the module again and run it on, as they do a flow's run.

/** A definition module with zod schemas: a refund that waits for approval (each refund made appends to refunds.txt) and a client tool. */
const MODULE = `import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const made = fileURLToPath(new URL('./refunds.txt', import.meta.url));

export default {
  name: 'refund-desk',
  description: 'Refunds orders',
  promptConfig: { systemPrompt: 'You refund orders.', query: 'Refund order \${order}.' },
  modelConfig: {
    provider: 'scripted',
    answers: [
      { action: 'tool', tool: 'ask_user', input: { question: 'How much?' }, confidence: 0.5 },
      { action: 'tool', tool: 'refund', input: { order: 'A-1', amount: 30 }, confidence: 0.6 },
      { action: 'final', message: 'Refunded 30 EUR.', confidence: 0.95 },
    ],
  },
  toolConfig: {
    tools: [
      { name: 'ask_user', description: 'Asks the person using the app', inputSchema: z.object({ question: z.string() }), executor: 'client' },
      {
        name: 'refund',
        description: 'Refunds an order',
        inputSchema: z.object({ order: z.string(), amount: z.number().positive() }),
        requiresApproval: true,
        execute: ({ order, amount }: { order: string; amount: number }) => {
          appendFileSync(made, order + ' ' + amount + '\\n');
          return { refunded: amount };
        },
      },
    ],
  },
  inputConfig: { inputs: { order: { type: 'string' } } },
};
`;

let dir: string;
beforeEach(async () => {
  // In the repository, so the module finds zod.
  dir = await mkdtemp(path.join(REPO_ROOT, 'test-artifacts-agent-waits-'));
  await writeFile(path.join(dir, 'refund-desk.ts'), MODULE);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function refunds(): Promise<string[]> {
  return (await readFile(path.join(dir, 'refunds.txt'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

describe('redflow run of an agent definition that waits', () => {
  it('should park at each wait (exit 3) and go on with tool-result, then approve, making the refund once', async () => {
    const run = await runCli(['run', 'refund-desk.ts', '--input', '{"order": "A-1"}', '--log', 'run.jsonl'], { cwd: dir });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain("waits for the result of ask_user, which the client runs");
    expect(run.stderr).toContain('redflow tool-result run.jsonl --output <json>');

    const answered = await runCli(['tool-result', 'run.jsonl', '--output', '{"amount": 30}'], { cwd: dir });
    expect(answered.code, answered.stderr).toBe(3);
    expect(answered.stderr).toContain('redflow approve run.jsonl');
    expect(await refunds()).toEqual([]);

    // An answer of the wrong kind is refused (65) and changes nothing.
    const wrong = await runCli(['tool-result', 'run.jsonl', '--output', '{}'], { cwd: dir });
    expect(wrong.code).toBe(65);
    expect(wrong.stderr).toContain('RUN_NOT_WAITING');

    const approved = await runCli(['approve', 'run.jsonl', '--reason', 'checked'], { cwd: dir });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout.trim()).toBe('Refunded 30 EUR.');
    expect(await refunds()).toEqual(['A-1 30']);
    const { events } = await readVerifiedLog(path.join(dir, 'run.jsonl'));
    expect(events.map((e) => e.type).filter((t) => t.startsWith('tool.'))).toEqual(['tool.requested', 'tool.completed', 'tool.requested', 'tool.approved', 'tool.completed']);
  }, 90_000);

  it('should never make a denied refund, the model reading why', async () => {
    await runCli(['run', 'refund-desk.ts', '--input', '{"order": "A-1"}', '--log', 'run.jsonl'], { cwd: dir });
    await runCli(['tool-result', 'run.jsonl', '--output', '{"amount": 30}'], { cwd: dir });
    const denied = await runCli(['deny', 'run.jsonl', '--reason', 'over the limit', '--json'], { cwd: dir });
    expect(denied.code, denied.stderr).toBe(0);
    expect(await refunds()).toEqual([]);
    const { events } = await readVerifiedLog(path.join(dir, 'run.jsonl'));
    expect(events.find((e) => e.type === 'tool.denied')?.data).toMatchObject({ tool: 'refund', reason: 'over the limit' });
  }, 90_000);
  it('should go on with the script the run was started with (run --script) when approve answers it', async () => {
    await writeFile(
      path.join(dir, 'answers.json'),
      JSON.stringify([
        { action: 'tool', tool: 'refund', input: { order: 'S-9', amount: 9 }, confidence: 0.6 },
        { action: 'final', message: 'The script refunded 9 EUR.', confidence: 0.95 },
      ]),
    );
    const run = await runCli(['run', 'refund-desk.ts', '--input', '{"order": "A-1"}', '--log', 'run.jsonl', '--script', 'answers.json'], { cwd: dir });
    expect(run.code, run.stderr).toBe(3);
    const approved = await runCli(['approve', 'run.jsonl'], { cwd: dir });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout.trim()).toBe('The script refunded 9 EUR.');
    expect(await refunds()).toEqual(['S-9 9']);
  });
  it('should refuse an approval past the wait\'s deadline with WAIT_EXPIRED (exit 65), the refund never made', async () => {
    // The same definition, whose waits last 1 ms.
    await writeFile(path.join(dir, 'quick.ts'), MODULE.replace("inputConfig:", 'runConfig: { waitTimeoutMs: 1 },\n  inputConfig:'));
    await writeFile(path.join(dir, 'answers.json'), JSON.stringify([{ action: 'tool', tool: 'refund', input: { order: 'L-1', amount: 5 }, confidence: 0.6 }, { action: 'final', message: 'never', confidence: 0.9 }]));
    const run = await runCli(['run', 'quick.ts', '--input', '{"order": "L-1"}', '--log', 'late.jsonl', '--script', 'answers.json'], { cwd: dir });
    expect(run.code, run.stderr).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await runCli(['approve', 'late.jsonl'], { cwd: dir });
    expect(late.code, late.stderr).toBe(65);
    expect(late.stderr).toContain('error WAIT_EXPIRED');
    expect(await refunds()).toEqual([]);
    const { events } = await readVerifiedLog(path.join(dir, 'late.jsonl'));
    expect(events.at(-1)?.data.outcome).toMatchObject({ status: 'blocked', reason: 'wait_expired' });
  });
});
