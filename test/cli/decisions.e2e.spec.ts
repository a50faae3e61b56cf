// The CLI and the model's decisions besides a tool call or a final answer: a question to a person
// parks the run (exit 3) until `redflow answer`, or ends it escalate (exit 2) once its wait is
// over; a delegation ends it delegate (exit 4) with the handoff; a structured output is checked
// against the agent's outputSchema without failing the run.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readVerifiedLog, runCli } from '../support/cli.js';
import { waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';
import { tempDirs } from '../server/serverHarness.js';

const dirs = tempDirs();
beforeAll(() => {
  if (!existsSync(new URL('../../dist/cli/answerCommands.js', import.meta.url))) throw new Error('dist/ is not built: run `npm run build` first');
});
afterAll(() => dirs.cleanup());

const escalate = { action: 'escalate', input: { reason: 'over the refund limit', question: 'May I refund 120 EUR?' } };

async function project(answers: readonly unknown[], agent: Record<string, unknown> = {}) {
  const cwd = await dirs.make('redflow-cli-decisions-');
  await writeWaitingFlow(cwd, waitingFlow(answers, { requiresApproval: [], ...agent }));
  return { cwd, log: (traceId: string) => path.join(cwd, '.redflow', 'runs', `${traceId}.jsonl`) };
}

describe('redflow run with the model asking a person', () => {
  it('should park on an escalation (exit 3) and go on with redflow answer (exit 0)', async () => {
    const { cwd, log } = await project([escalate, waitAnswer.final('refunded')]);
    const run = await runCli(['run', 'flow.json', '--input', 'refund A-1', '--trace-id', 'h1'], { cwd });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(`waits for a person's answer to "May I refund 120 EUR?"`);
    expect(run.stderr).toContain('reason:  over the refund limit');
    expect(run.stderr).toContain('redflow answer .redflow/runs/h1.jsonl --text <answer>');

    const refused = await runCli(['approve', 'h1'], { cwd });
    expect(refused.code).toBe(65);
    expect(refused.stderr).toContain('RUN_NOT_WAITING');

    const answered = await runCli(['answer', 'h1', '--text', 'yes, refund it'], { cwd });
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout.trim()).toBe('refunded');
    const { events } = await readVerifiedLog(log('h1'));
    expect(events.map((event) => event.type)).toContain('human.answered');
  });

  it('should end escalate (exit 2) with the question once the wait is over', async () => {
    const { cwd } = await project([{ action: 'request_info', input: { question: 'Which order?' } }], { waitTimeoutMs: 1 });
    const run = await runCli(['run', 'flow.json', '--input', 'refund', '--trace-id', 'h2'], { cwd });
    expect(run.code, run.stderr).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const resumed = await runCli(['resume', '.redflow/runs/h2.jsonl', '--json'], { cwd });
    expect(resumed.code, resumed.stderr).toBe(2);
    const printed = JSON.parse(resumed.stdout) as { outcome: unknown };
    expect(printed.outcome).toMatchObject({ status: 'escalate', reason: 'info_requested', question: { action: 'request_info', question: 'Which order?' }, error: { code: 'HUMAN_ANSWER_MISSING' } });
  });
});

describe('redflow run with a delegation and a structured output', () => {
  it('should end delegate (exit 4) with the handoff', async () => {
    const { cwd } = await project([{ action: 'delegate', input: { agent_id: 'billing', task: 'refund order A-1' } }]);
    const run = await runCli(['run', 'flow.json', '--input', 'refund', '--trace-id', 'd1'], { cwd });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toContain('delegate (delegated): handed to agent billing');
    expect(run.stderr).toContain('task: refund order A-1');
    const replay = await runCli(['replay', '.redflow/runs/d1.jsonl', '--steps'], { cwd });
    expect(replay.stdout).toContain('handed to agent billing (delegate)');
  });

  it('should print a valid output (exit 0), and an invalid one flagged, still exit 0', async () => {
    const schema = { type: 'object', required: ['summary'], properties: { summary: { type: 'string' } } };
    const good = await project([{ action: 'final', output: { summary: 'ok' } }], { outputSchema: schema });
    const valid = await runCli(['run', 'flow.json', '--input', 'x', '--json'], { cwd: good.cwd });
    expect(valid.code, valid.stderr).toBe(0);
    expect((JSON.parse(valid.stdout) as { outcome: unknown }).outcome).toMatchObject({ status: 'done', output: { summary: 'ok' }, validated: true });

    const bad = await project([{ action: 'final', message: 'done', output: { summary: 1 } }], { outputSchema: schema });
    const invalid = await runCli(['run', 'flow.json', '--input', 'x'], { cwd: bad.cwd });
    expect(invalid.code, invalid.stderr).toBe(0);
    expect(invalid.stdout.trim()).toBe('done');
    expect(invalid.stderr).toContain('output does not match the outputSchema: /summary must be string');
  });

  it('should refuse a flow whose outputSchema is not a JSON Schema (exit 65)', async () => {
    const { cwd } = await project([waitAnswer.final('x')], { outputSchema: { type: 'no-such-type' } });
    const run = await runCli(['validate', 'flow.json'], { cwd });
    expect(run.code).toBe(65);
    expect(run.stdout + run.stderr).toContain('outputSchema is not a valid JSON Schema');
  });
});
