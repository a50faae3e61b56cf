import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { fold } from '../../src/events/evolve.js';
import { runDetails } from '../../src/machines/stepDetails.js';

// A run that repairs invalid answers (onInvalidAnswer), killed with SIGKILL after each event of
// the middle of a repair and resumed: it re-asks the model exactly as the uninterrupted run did, and ends the
// same. Runs the built CLI (npm test builds dist/ first).

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const flow = path.join(root, 'examples/answer-repair/flow.json');

/** The commands of docs/flows.md's repair section (its `sh` block), each as its arguments: run as written. */
function documentedCommands(): string[][] {
  const page = readFileSync(path.join(root, 'docs/flows.md'), 'utf8');
  const block = /```sh\n(redflow run examples\/answer-repair[\s\S]*?)```/.exec(page)?.[1] ?? '';
  return block
    .split('\n')
    .filter((line) => line.startsWith('redflow '))
    .map((line) => [...line.slice('redflow '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? ''))
    .map((args) => args.map((arg) => (arg.startsWith('examples/') ? path.join(root, arg) : arg)));
}

/** The built CLI in the test's folder (no model settings from this process's environment). */
const redflow = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: dir, env });

let dir: string;
let baseline: { stdout: string; events: AgentEvent[] };

/** What each model call was sent, by iteration (the later call counts when one was asked again). */
const asked = (events: readonly AgentEvent[]) => runDetails(events).iterations.map((it) => it.messages);
const steps = (events: readonly AgentEvent[]) => events.filter((e) => e.type !== 'run.resumed').map((e) => e.type);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-repair-crash-'));
  // The run command of the docs, as written (its log in the test's folder).
  const [run] = documentedCommands();
  expect(run?.slice(0, 2)).toEqual(['run', flow]);
  const log = path.join(dir, 'repair.jsonl');
  const result = await redflow([...(run ?? []), '--trace-id', 'repair']);
  expect(result.code, result.stderr).toBe(0);
  baseline = { stdout: result.stdout, events: [...(await readJsonlLog(log)).events] as AgentEvent[] };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function crashAndResume(k: number): Promise<void> {
  const log = path.join(dir, `kill-${k}.jsonl`);
  const killed = await redflow(['run', flow, '--input', 'Where is order A-1001?', '--log', log, '--trace-id', 'repair'], { REDFLOW_CRASH_AFTER_EVENT: String(k) });
  expect(killed.signal, `run killed after event ${k}`).toBe('SIGKILL');
  const resumed = await redflow(['resume', log]);
  expect(resumed.code, `resume after event ${k}: ${resumed.stderr}`).toBe(0);
  expect(resumed.stdout).toBe(baseline.stdout);
  const after = await readJsonlLog(log);
  expect(after.problems).toEqual([]);
  const events = after.events as AgentEvent[];
  expect(steps(events), `after event ${k}`).toEqual(steps(baseline.events));
  expect(asked(events), `after event ${k}`).toEqual(asked(baseline.events));
  expect(fold(events).observability.outcome).toEqual(fold(baseline.events).observability.outcome);
}

describe('a run that repairs its answers, killed and resumed', () => {
  it('should repair twice and complete, uninterrupted', () => {
    expect(baseline.stdout.trim()).toBe('Order A-1001 shipped.');
    expect(baseline.events.filter((e) => e.type === 'answer.rejected').map((e) => (e.data as { error: { code: string } }).error.code)).toEqual(['INVALID_JSON', 'TOOL_INPUT_INVALID']);
  });

  it('should re-ask exactly as the live run did and end the same, killed in the middle of a repair', async () => {
    // After an answer not yet judged (3: judged again on resume), after its rejection (4: the model is
    // asked again), after the second answer (6). Every other prefix is covered in process (test/machines/answerRepair.spec.ts).
    expect(baseline.events.map((e) => e.type).slice(2, 7)).toEqual(['model.answered', 'answer.rejected', 'model.requested', 'model.answered', 'answer.rejected']);
    await Promise.all([3, 4].map((k) => crashAndResume(k)));
    await crashAndResume(6);
  }, 60_000);

  it('should show each rejected answer in redflow replay --steps, the command of the docs', async () => {
    const replay = await redflow(documentedCommands()[1] ?? []);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toContain('verdict: ✖ rejected, sent back for repair (onInvalidAnswer): INVALID_JSON');
    expect(replay.stdout).toContain('verdict: ✖ rejected, sent back for repair (onInvalidAnswer): TOOL_INPUT_INVALID');
    expect(replay.stdout).toContain('Your answer was rejected: INVALID_JSON');
  });
});
