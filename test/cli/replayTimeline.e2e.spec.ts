// The timeline `redflow replay <log>` prints, as `redflow run` printed it live: each model call's
// tokens on its iteration's line and the run's total; and for a log that stops in the middle of a
// step (a run still going on, or interrupted), that step marked as under way. The real command
// (bin/redflow.js runs the compiled dist/: build first), its model a Chat Completions server
// speaking the wire protocol; the logs cut short are prefixes of a real run's log.
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { timelineLines } from './cliHarness.js';

let model: FakeChatServer;
let dir: string;
/** The lines of the log of a finished run: a tool call, then the final answer. */
let logLines: string[];

/** A flow asking the server, with the tool `lookup`; `approval`: its calls need a person's approval. */
function flow(approval: boolean) {
  return {
    id: 'replay-timeline',
    nodes: [
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 5, ...(approval && { requiresApproval: ['lookup'] }) } },
      { id: 'model', type: 'model.llm', config: { provider: 'openai-compatible', model: 'test-model', baseUrl: model.baseUrl, maxRetries: 0 } },
      { id: 'lookup', type: 'tool.module', config: { module: './lookup.mjs' } },
    ],
    edges: [
      { id: 'e1', source: 'agent', target: 'model' },
      { id: 'e2', source: 'agent', target: 'lookup' },
    ],
  };
}

const LOOKUP = `export default {
  name: 'lookup',
  description: 'Looks an order up',
  inputSchema: { type: 'object' },
  execute: () => ({ status: 'shipped' }),
};
`;
const CALL = JSON.stringify({ action: 'tool', tool: 'lookup', input: { orderId: 'A-1' }, confidence: 0.6 });
const FINAL = JSON.stringify({ action: 'final', message: 'It shipped.', confidence: 0.9 });

/** `redflow replay` of the first `count` lines of the finished run's log (all of them without `count`). */
async function replayPrefix(count?: number) {
  const file = path.join(dir, `cut-${count ?? 'all'}.jsonl`);
  await writeFile(file, `${logLines.slice(0, count).join('\n')}\n`);
  const result = await runCli(['replay', file], { cwd: dir });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.split('\n');
}

/** How many lines the log has up to and with the `nth` (0-based) event of `type`. */
function through(type: string, nth = 0): number {
  // A record is its checksum, a space, then the event's JSON.
  const indexes = logLines.flatMap((line, index) => ((JSON.parse(line.slice(line.indexOf(' ') + 1)) as { type?: string }).type === type ? [index] : []));
  const index = indexes[nth];
  if (index === undefined) throw new Error(`no ${type} #${nth} in the log`);
  return index + 1;
}

describe('redflow replay’s timeline', () => {
  beforeAll(async () => {
    model = await startFakeChatCompletionsServer();
    model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
    dir = await realpath(await mkdtemp(path.join(tmpdir(), 'redflow-replay-timeline-')));
    await writeFile(path.join(dir, 'lookup.mjs'), LOOKUP);
    await writeFile(path.join(dir, 'flow.json'), JSON.stringify(flow(false)));
    await writeFile(path.join(dir, 'approval.json'), JSON.stringify(flow(true)));
    model.enqueue(
      { kind: 'completion', content: CALL, usage: { prompt_tokens: 120, completion_tokens: 18, total_tokens: 138 } },
      { kind: 'completion', content: FINAL, usage: { prompt_tokens: 150, completion_tokens: 7, total_tokens: 157 } },
    );
    const run = await runCli(['run', path.join(dir, 'flow.json'), '--input', 'Where is A-1?', '--log', path.join(dir, 'run.jsonl')], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    logLines = (await readFile(path.join(dir, 'run.jsonl'), 'utf8')).trimEnd().split('\n');
  }, 30_000);

  afterAll(async () => {
    await model?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should show each model call’s tokens on its iteration’s line, and the total', async () => {
    const lines = await replayPrefix();
    expect(lines.find((line) => /^ {2}#1 {2}tool/.test(line))).toMatch(/lookup\s+conf 0\.60\s+\d+ ms {2}tokens 120 in \/ 18 out$/);
    expect(lines.find((line) => /^ {2}#2 {2}final/.test(line))).toMatch(/\d+ ms {2}tokens 150 in \/ 7 out$/);
    expect(lines).toContain('  total  tokens 270 in / 25 out (295) over 2 model calls');
    expect(lines).toContain('done (final_answer)');
    expect(lines.some((line) => line.includes('under way'))).toBe(false);
  });

  it('should mark the step under way where the log stops: a tool call running, then a model call waited for', async () => {
    const inTool = await replayPrefix(through('tool.requested'));
    expect(inTool).toContain('  … #1  running lookup (under way where the log stops)');
    expect(timelineLines(inTool.join('\n'))).toEqual([{ iteration: 1, action: 'tool', what: 'lookup' }]);
    expect(inTool).toContain('unfinished: `redflow resume` continues it');

    const inModel = await replayPrefix(through('model.requested', 1));
    expect(inModel).toContain('  … #2  waiting for the model (under way where the log stops)');
    expect(inModel.filter((line) => line.includes('under way'))).toHaveLength(1);
    // Only the first call has answered: its tokens are the total so far.
    expect(inModel).toContain('  total  tokens 120 in / 18 out (138) over 1 model call');

    // Between steps (the tool has answered, the model is not asked yet) nothing is under way.
    const between = await replayPrefix(through('tool.completed'));
    expect(between.some((line) => line.includes('under way'))).toBe(false);
  });

  it('should say what a parked run waits for', async () => {
    model.enqueue({ kind: 'completion', content: CALL });
    const log = path.join(dir, 'parked.jsonl');
    const parked = await runCli(['run', path.join(dir, 'approval.json'), '--input', 'Where is A-1?', '--log', log], { cwd: dir });
    expect(parked.code, parked.stderr).toBe(3);
    const replayed = await runCli(['replay', log], { cwd: dir });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout.split('\n')).toContain('  … #1  waiting for an approval of lookup (under way where the log stops)');
  });
});
