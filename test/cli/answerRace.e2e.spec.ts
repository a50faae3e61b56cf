// Two `redflow approve` processes answering one waiting run at the same moment: one runs it on,
// the other is refused as over HTTP (WAIT_ALREADY_ANSWERED), and nothing tells the loser to delete
// the lock the winner holds (which would let a second writer into a live run's log).
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, readVerifiedLog, runCli, type CliResult } from '../support/cli.js';
import { echoEffects, waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';
import { tempDirs } from '../server/serverHarness.js';

const dirs = tempDirs();
beforeAll(() => {
  if (!existsSync(new URL('../../dist/cli/answerCommands.js', import.meta.url))) throw new Error('dist/ is not built: run `npm run build` first');
});
afterAll(() => dirs.cleanup());

/**
 * The echo tool, slow twice over: loading it takes a moment, so both processes have read the log
 * (the wait unanswered) before either takes its lock; its call takes longer, so the winner still
 * holds the lock when the loser tries to take it.
 */
const SLOW_ECHO_TOOL = `import { appendFileSync } from 'node:fs';
await new Promise((resolve) => setTimeout(resolve, 1500));
export default {
  name: 'echo',
  description: 'Echoes its text, slowly',
  inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  async execute({ text }, { idempotencyKey }) {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    appendFileSync(new URL('../effects.log', import.meta.url), idempotencyKey + '\\n');
    return { echoed: text };
  },
};
`;

/** An agent definition whose approved refund is slow, and whose module is slow to load (as SLOW_ECHO_TOOL). */
const SLOW_DEFINITION = `import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

await new Promise((resolve) => setTimeout(resolve, 1500));
const made = fileURLToPath(new URL('./refunds.txt', import.meta.url));

export default {
  name: 'slow-desk',
  description: 'Refunds orders, slowly',
  promptConfig: { systemPrompt: 'You refund orders.', query: 'Refund.' },
  modelConfig: {
    provider: 'scripted',
    answers: [
      { action: 'tool', tool: 'refund', input: { order: 'A-1' }, confidence: 0.6 },
      { action: 'final', message: 'refunded', confidence: 0.95 },
    ],
  },
  toolConfig: {
    tools: [
      {
        name: 'refund',
        description: 'Refunds an order',
        inputSchema: z.object({ order: z.string() }),
        requiresApproval: true,
        execute: async ({ order }: { order: string }) => {
          await new Promise((resolve) => setTimeout(resolve, 2500));
          appendFileSync(made, order + '\\n');
          return { refunded: true };
        },
      },
    ],
  },
};
`;

/** One approval ran the run on to `answer`; the other was refused as a lost race, and neither said to delete a lock. */
function expectOneWinner(results: readonly CliResult[], answer: string): void {
  const winner = results.find((result) => result.code === 0);
  const loser = results.find((result) => result !== winner);
  expect(winner, results.map((result) => result.stderr).join('\n---\n')).toBeDefined();
  expect(winner?.stdout.trim()).toBe(answer);
  expect(loser?.code, loser?.stderr).toBe(65);
  expect(loser?.stderr).toContain('error WAIT_ALREADY_ANSWERED');
  for (const result of results) {
    expect(result.stderr).not.toMatch(/delete|remove/i);
    expect(result.stderr).not.toContain('LOG_CONCURRENT_WRITER');
  }
}

describe('two processes answering one wait', () => {
  it('should run the approved call once and refuse the other approval with WAIT_ALREADY_ANSWERED, never suggesting to delete a live lock', async () => {
    const cwd = await dirs.make('redflow-cli-race-');
    await writeWaitingFlow(cwd, waitingFlow([waitAnswer.echo('once'), waitAnswer.final('echoed once')]));
    await writeFile(path.join(cwd, 'tools', 'echo.mjs'), SLOW_ECHO_TOOL);
    const parked = await runCli(['run', 'flow.json', '--input', 'hi', '--trace-id', 'race'], { cwd });
    expect(parked.code, parked.stderr).toBe(3);

    const results = await Promise.all([runCli(['approve', 'race'], { cwd }), runCli(['approve', 'race'], { cwd })]);
    expectOneWinner(results, 'echoed once');
    expect(await echoEffects(cwd)).toEqual(['race:1']);
    const { events } = await readVerifiedLog(path.join(cwd, '.redflow', 'runs', 'race.jsonl'));
    expect(events.filter((event) => event.type === 'tool.approved')).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(existsSync(path.join(cwd, '.redflow', 'runs', 'race.jsonl.lock'))).toBe(false);
  });

  // Racy by nature: before the fix this failed whenever the loser read the log before the winner wrote to it.
  it('should refuse the losing approval of an agent definition\'s run with WAIT_ALREADY_ANSWERED too', async () => {
    // In the repository, so the module finds zod.
    const cwd = await mkdtemp(path.join(REPO_ROOT, 'test-artifacts-answer-race-'));
    try {
      await writeFile(path.join(cwd, 'desk.ts'), SLOW_DEFINITION);
      const parked = await runCli(['run', 'desk.ts', '--input', '{}', '--log', 'run.jsonl'], { cwd });
      expect(parked.code, parked.stderr).toBe(3);
      const results = await Promise.all([runCli(['approve', 'run.jsonl'], { cwd }), runCli(['approve', 'run.jsonl'], { cwd })]);
      expectOneWinner(results, 'refunded');
      expect((await readFile(path.join(cwd, 'refunds.txt'), 'utf8')).trim().split('\n')).toHaveLength(1);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
