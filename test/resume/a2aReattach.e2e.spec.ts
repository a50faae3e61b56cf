// An agent.a2a call whose caller (`redflow run`) is killed with SIGKILL while the remote task works:
// the remote task's id is in the log (tool.attached) before the task ends, so `redflow resume`
// follows that task to its end instead of sending the message again. The remote is a plain A2A
// SDK server in its own process that counts the messages it gets.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isToolUpdate, type RunToolUpdate } from '../../src/runtime/serveActors.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { REPO_ROOT, readVerifiedLog, runCli } from '../support/cli.js';
import { codeBlocks, section } from '../docs/docPages.js';

const AGENT = path.join(REPO_ROOT, 'test/fixtures/a2a/countingAgent.mjs');
const TASK = 'Refund order A-1001';

let dir: string;
let remote: ChildProcess;
let url: string;

/** How many messages the remote got, and which tasks were cancelled. */
async function remoteCount(): Promise<{ messages: number; cancelled: string[] }> {
  return (await (await fetch(`${url}count`)).json()) as { messages: number; cancelled: string[] };
}

async function callerFlow(name: string): Promise<string> {
  const file = path.join(dir, `${name}.json`);
  const flow = {
    id: name,
    nodes: [
      { id: 'in', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 3 } },
      {
        id: 'model',
        type: 'model.llm',
        config: { provider: 'scripted', answers: [{ action: 'tool', tool: 'desk', input: { task: TASK }, confidence: 0.5 }, { action: 'final', message: 'relayed', confidence: 0.9 }] },
      },
      { id: 'desk', type: 'agent.a2a', config: { url, timeoutMs: 60_000 } },
    ],
    edges: [
      { id: 'e-in', source: 'in', target: 'agent' },
      { id: 'e-model', source: 'agent', target: 'model' },
      { id: 'e-desk', source: 'agent', target: 'desk' },
    ],
  };
  await writeFile(file, JSON.stringify(flow));
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-a2a-reattach-'));
  // Five steps of 600 ms: a task that is still working when its caller is killed.
  remote = spawn(process.execPath, [AGENT, '600', '5'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const [first] = (await once(remote.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  url = first.toString('utf8').trim();
});

afterAll(async () => {
  remote?.kill();
  await rm(dir, { recursive: true, force: true });
});

describe('an agent.a2a call whose caller is killed mid-task', () => {
  it("should log the remote task's id before it ends, and on resume get the remote's answer without sending the message again", async () => {
    const flowPath = await callerFlow('caller');
    const log = path.join(dir, 'ra.jsonl');
    const before = (await remoteCount()).messages;
    // run.started, model.requested, model.answered, tool.requested, tool.attached: killed there.
    const killed = await runCli(['run', flowPath, '--input', 'go', '--log', log, '--trace-id', 'ra'], { cwd: dir, env: { REDFLOW_CRASH_AFTER_EVENT: 'ra:5' }, timeoutMs: 30_000 });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const cut = (await readVerifiedLog(log)).events;
    expect(cut.map((event) => event.type)).toEqual(['run.started', 'model.requested', 'model.answered', 'tool.requested', 'tool.attached']);
    const attached = cut[4]?.data as { tool: string; idempotencyKey: string; handle: { taskId: string } };
    expect(attached).toMatchObject({ tool: 'desk', idempotencyKey: 'ra:1', handle: { taskId: expect.any(String) } });
    expect((await remoteCount()).messages).toBe(before + 1);
    // docs/a2a.md shows the event as logged.
    const [shown] = codeBlocks(section('docs/a2a.md', '### Re-attach on resume')).filter((block) => block.lang === 'json');
    const documented = JSON.parse(shown?.code ?? '{}') as { type: string; iteration: number; data: Record<string, unknown> };
    expect({ type: documented.type, iteration: documented.iteration, keys: Object.keys(documented.data), handle: Object.keys(documented.data.handle as object) }).toEqual({
      type: cut[4]?.type,
      iteration: 1,
      keys: Object.keys(attached),
      handle: ['taskId'],
    });

    const resumed = await runCli(['resume', log], { cwd: dir, timeoutMs: 30_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe('relayed');
    const { events } = await readVerifiedLog(log);
    expect(events.slice(5).map((event) => event.type)).toEqual(['run.resumed', 'tool.completed', 'model.requested', 'model.answered', 'run.completed']);
    // The answer is the task's that was started before the kill: the remote got the message once.
    expect(events[6]?.data).toMatchObject({ tool: 'desk', idempotencyKey: 'ra:1', ok: true, output: `done: ${TASK}` });
    expect(await remoteCount()).toEqual({ messages: before + 1, cancelled: [] });
  }, 90_000);

  it("should show the remote task's status and artifact updates as the call's progress, never logged", async () => {
    const flowPath = await callerFlow('watched');
    const updates: RunToolUpdate[] = [];
    const logPath = path.join(dir, 'watched.jsonl');
    const run = await runFlowFile({ flowPath, input: 'go', logPath, fsync: 'never', env: {}, onChunk: (message) => void (isToolUpdate(message) && updates.push(message)) });
    const result = await run.finished();
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'relayed' });
    const said = updates.flatMap((update) => (update.progress?.message === undefined ? [] : [update.progress.message]));
    expect(said).toEqual(['submitted', ...[1, 2, 3, 4, 5].map((step) => `working: step ${step} of 5`), `artifact answer: done: ${TASK}`, 'completed']);
    // The task's id went to the log once, as the call's attachment; the progress did not.
    const attachments = updates.filter((update) => update.attached !== undefined);
    expect(attachments).toHaveLength(1);
    const { events } = await readVerifiedLog(logPath);
    expect(events.filter((event) => event.type === 'tool.attached').map((event) => event.data.handle)).toEqual([attachments[0]?.attached]);
  }, 60_000);
});
