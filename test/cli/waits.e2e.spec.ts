// The CLI and runs that wait for an answer from outside: `redflow run` parks a waiting run in its
// log (exit 3, saying how to answer), and `redflow approve|deny|tool-result` answer it from the log
// and run it on; answers the wait does not take are refused with their codes.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readVerifiedLog, runCli } from '../support/cli.js';
import { echoEffects, waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';
import { tempDirs } from '../server/serverHarness.js';

const dirs = tempDirs();
beforeAll(() => {
  if (!existsSync(new URL('../../dist/cli/answerCommands.js', import.meta.url))) throw new Error('dist/ is not built: run `npm run build` first');
});
afterAll(() => dirs.cleanup());

async function project(answers: readonly unknown[], agent: Record<string, unknown> = {}) {
  const cwd = await dirs.make('redflow-cli-waits-');
  await writeWaitingFlow(cwd, waitingFlow(answers, agent));
  return { cwd, log: (traceId: string) => path.join(cwd, '.redflow', 'runs', `${traceId}.jsonl`) };
}

describe('redflow run with a run that waits', () => {
  it('should park the run (exit 3) and say how to answer; tool-result and approve then run it to its end', async () => {
    const { cwd, log } = await project([waitAnswer.ask(), waitAnswer.echo('hello'), waitAnswer.final('echoed hello')]);
    const run = await runCli(['run', 'flow.json', '--input', 'hi', '--trace-id', 'w1'], { cwd });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('waits for the result of ask_user, which the client runs');
    expect(run.stderr).toContain('redflow tool-result .redflow/runs/w1.jsonl --output <json>');
    expect(run.stderr).toContain('input: {"question":"which text?"}');
    expect(run.stdout).toBe('');

    const replay = await runCli(['replay', '.redflow/runs/w1.jsonl', '--steps'], { cwd });
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain('waiting for its client to run it');
    // Without --steps too: the run waits for its answer (resume would leave it as it is).
    const timeline = await runCli(['replay', '.redflow/runs/w1.jsonl'], { cwd });
    expect(timeline.stdout).toContain('waiting: run w1 waits for the result of ask_user');
    expect(timeline.stdout).toContain('`redflow tool-result .redflow/runs/w1.jsonl --output <json>` answers it');
    expect(timeline.stdout).not.toContain('redflow resume');

    const result = await runCli(['tool-result', '.redflow/runs/w1.jsonl', '--output', '"hello"'], { cwd });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain('waits for an approval of echo');
    expect(result.stderr).toContain('redflow approve .redflow/runs/w1.jsonl');
    expect(await echoEffects(cwd)).toEqual([]);

    // A trace id alone finds the log in .redflow/runs.
    const approved = await runCli(['approve', 'w1', '--reason', 'looks right'], { cwd });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout.trim()).toBe('echoed hello');
    expect(approved.stderr).toContain('echo approved: looks right');
    expect(await echoEffects(cwd)).toEqual(['w1:2']);

    const { events } = await readVerifiedLog(log('w1'));
    expect(events.map((event) => event.type)).toEqual([
      'run.started',
      'model.requested',
      'model.answered',
      'tool.requested',
      'run.resumed',
      'tool.completed',
      'model.requested',
      'model.answered',
      'tool.requested',
      'run.resumed',
      'tool.approved',
      'tool.completed',
      'model.requested',
      'model.answered',
      'run.completed',
    ]);

    const again = await runCli(['approve', 'w1'], { cwd });
    expect(again.code).toBe(65);
    expect(again.stderr).toContain('error RUN_ALREADY_FINISHED');
  });

  it('should give the model a denial, with its reason, as its observation', async () => {
    const { cwd, log } = await project([waitAnswer.echo('rm -rf /'), waitAnswer.final('I will not do that')]);
    expect((await runCli(['run', 'flow.json', '--input', 'hi', '--trace-id', 'w2'], { cwd })).code).toBe(3);
    const denied = await runCli(['deny', 'w2', '--reason', 'too dangerous', '--json'], { cwd });
    expect(denied.code, denied.stderr).toBe(0);
    const body = JSON.parse(denied.stdout) as { outcome: { answer: string }; envelope: { tools: { history: { status: string; error?: { code: string; message: string } }[] } } };
    expect(body.outcome.answer).toBe('I will not do that');
    expect(body.envelope.tools.history[0]).toMatchObject({ status: 'failed', error: { code: 'TOOL_DENIED' } });
    expect(body.envelope.tools.history[0]?.error?.message).toContain('too dangerous');
    expect(await echoEffects(cwd)).toEqual([]);
    const steps = await runCli(['replay', log('w2'), '--steps'], { cwd });
    expect(steps.stdout).toContain('denied: too dangerous');
    expect(steps.stdout).toContain('error TOOL_DENIED');
  });

  it('should print the wait as JSON with --json, and end the wait with WAIT_EXPIRED once past its deadline', async () => {
    const { cwd } = await project([waitAnswer.ask(), waitAnswer.final('never')], { waitTimeoutMs: 1 });
    const run = await runCli(['run', 'flow.json', '--input', 'hi', '--trace-id', 'w3', '--json'], { cwd });
    expect(run.code).toBe(3);
    const parked = JSON.parse(run.stdout) as { traceId: string; waiting: { kind: string; tool: string; deadline: string }; log: string };
    expect(parked).toMatchObject({ traceId: 'w3', waiting: { kind: 'client', tool: 'ask_user' } });
    expect(parked.log).toMatch(/w3\.jsonl$/);
    // Nothing holds the run to end it: the next answer finds the wait expired, and `resume` ends it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const resumed = await runCli(['resume', '.redflow/runs/w3.jsonl'], { cwd });
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stderr).toContain('WAIT_EXPIRED');
  });

  it('should refuse an approval past the wait\'s deadline with WAIT_EXPIRED (exit 65, as its help says), the run ending blocked', async () => {
    const { cwd, log } = await project([waitAnswer.echo('late'), waitAnswer.final('never')], { waitTimeoutMs: 1 });
    expect((await runCli(['run', 'flow.json', '--input', 'hi', '--trace-id', 'w5'], { cwd })).code).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await runCli(['approve', 'w5'], { cwd });
    expect(late.code, late.stderr).toBe(65);
    expect(late.stderr).toContain('error WAIT_EXPIRED');
    const help = await runCli(['approve', '--help'], { cwd });
    // The help lists WAIT_EXPIRED with exit 65, before 66.
    expect(/ 65 when([\s\S]*?); 66 /.exec(help.stdout.replace(/\s+/g, ' '))?.[1]).toContain('WAIT_EXPIRED');
    // The call was never made; the run took the wait's expiry instead.
    expect(await echoEffects(cwd)).toEqual([]);
    const { events } = await readVerifiedLog(log('w5'));
    expect(events.at(-1)?.data.outcome).toMatchObject({ status: 'blocked', reason: 'wait_expired' });
  });

  it('should go on with the script a run was started with (run --script) when approve answers it', async () => {
    // The flow's own model would answer differently: the answers after the approval must be the script's.
    const { cwd, log } = await project([waitAnswer.final('the flow\'s model'), waitAnswer.final('the flow\'s model')]);
    await writeFile(path.join(cwd, 'answers.json'), JSON.stringify([waitAnswer.echo('scripted'), waitAnswer.final('the script\'s answer')]));
    const run = await runCli(['run', 'flow.json', '--input', 'hi', '--trace-id', 'w6', '--script', 'answers.json'], { cwd });
    expect(run.code, run.stderr).toBe(3);
    const approved = await runCli(['approve', 'w6'], { cwd });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout.trim()).toBe('the script\'s answer');
    expect(await echoEffects(cwd)).toEqual(['w6:1']);
    const { events } = await readVerifiedLog(log('w6'));
    expect(events[0]?.data).toMatchObject({ flow: { script: path.join(cwd, 'answers.json') } });
  });

  it('should refuse what the wait does not take, and a wrong command line, with their codes', async () => {
    const { cwd } = await project([waitAnswer.ask(), waitAnswer.final('ok')]);
    expect((await runCli(['run', 'flow.json', '--input', 'hi', '--trace-id', 'w4'], { cwd })).code).toBe(3);
    const wrongKind = await runCli(['approve', 'w4'], { cwd });
    expect(wrongKind.code).toBe(65);
    expect(wrongKind.stderr).toContain('error RUN_NOT_WAITING');
    const wrongCall = await runCli(['tool-result', 'w4', '--key', 'w4:3', '--output', '1'], { cwd });
    expect(wrongCall.code).toBe(65);
    expect(wrongCall.stderr).toContain('error WAIT_ANSWER_MISMATCH');
    expect(wrongCall.stderr).toContain('hint: answer with idempotencyKey "w4:1"');
    const noOutput = await runCli(['tool-result', 'w4'], { cwd });
    expect(noOutput.code).toBe(64);
    expect(noOutput.stderr).toContain('give exactly one of --output, --output-file and --error');
    const noRun = await runCli(['approve', 'nope'], { cwd });
    expect(noRun.code).toBe(66);
    const failed = await runCli(['tool-result', 'w4', '--error', 'the user closed the window'], { cwd });
    expect(failed.code, failed.stderr).toBe(0);
  });
});
