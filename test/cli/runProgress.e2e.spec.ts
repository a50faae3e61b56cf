// What `redflow run` prints while a run goes on, read by a pipe (not a terminal): each model call's
// tokens on its iteration's line, the run's total at the end, a failed tool call marked, and a
// model that takes its time named while the run waits for it. The real command (bin/redflow.js
// runs the compiled dist/: build first) against a Chat Completions server speaking the wire protocol.
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { timelineLines } from './cliHarness.js';

let model: FakeChatServer;
let dir: string;

beforeEach(async () => {
  model = await startFakeChatCompletionsServer();
  model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'redflow-progress-')));
});

afterEach(async () => {
  await model.stop();
  await rm(dir, { recursive: true, force: true });
});

async function writeFlow(): Promise<string> {
  await writeFile(
    path.join(dir, 'broken_lookup.mjs'),
    `export default {
  name: 'broken_lookup',
  description: 'Always fails',
  inputSchema: { type: 'object' },
  execute: () => { throw new Error('the lookup service is down'); },
};
`,
  );
  const flow = {
    id: 'progress',
    nodes: [
      { id: 'question', type: 'trigger.input' },
      { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 5 } },
      { id: 'model', type: 'model.llm', config: { provider: 'openai', model: 'test-model', baseUrl: model.baseUrl, maxRetries: 0 } },
      { id: 'broken_lookup', type: 'tool.module', config: { module: './broken_lookup.mjs' } },
      { id: 'reply', type: 'response.chat' },
    ],
    edges: [
      { id: 'e1', source: 'question', target: 'agent' },
      { id: 'e2', source: 'agent', target: 'model' },
      { id: 'e3', source: 'agent', target: 'broken_lookup' },
      { id: 'e4', source: 'agent', target: 'reply' },
    ],
  };
  const flowPath = path.join(dir, 'progress.json');
  await writeFile(flowPath, JSON.stringify(flow, null, 2));
  return flowPath;
}

describe('redflow run’s live timeline on a pipe', () => {
  it('should show each model call’s tokens, the total, the failed tool call, and a slow model while it works', async () => {
    const flow = await writeFlow();
    model.enqueue(
      {
        kind: 'delay',
        ms: 2500,
        then: {
          kind: 'completion',
          content: JSON.stringify({ action: 'tool', tool: 'broken_lookup', input: {}, confidence: 0.5 }),
          usage: { prompt_tokens: 120, completion_tokens: 18, total_tokens: 138 },
        },
      },
      {
        kind: 'completion',
        content: JSON.stringify({ action: 'final', message: 'the service is down', confidence: 0.9 }),
        usage: { prompt_tokens: 150, completion_tokens: 7, total_tokens: 157 },
      },
    );

    const run = await runCli(['run', flow, '--input', 'look it up'], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('the service is down');
    const lines = run.stderr.split('\n');
    const first = lines.findIndex((line) => /^ {2}#1 {2}tool/.test(line));
    // The wait is named before its iteration's line, and is no timeline line itself.
    const waiting = lines.findIndex((line) => line === '  … #1  waiting for the model (still in progress after 1 s)');
    expect(waiting, run.stderr).toBeGreaterThanOrEqual(0);
    expect(waiting).toBeLessThan(first);
    expect(lines[first]).toMatch(/broken_lookup\s+conf 0\.50\s+\d+ ms {2}tokens 120 in \/ 18 out {2}✖ TOOL_\w+$/);
    expect(lines.find((line) => /^ {2}#2 {2}final/.test(line))).toMatch(/\d+ ms {2}tokens 150 in \/ 7 out$/);
    expect(lines).toContain('  total  tokens 270 in / 25 out (295) over 2 model calls');
    expect(timelineLines(run.stderr)).toEqual([
      { iteration: 1, action: 'tool', what: 'broken_lookup' },
      { iteration: 2, action: 'final', what: '' },
    ]);
  });

  it('should leave the tokens out when the model does not report them', async () => {
    const flow = await writeFlow();
    model.enqueue({ kind: 'completion', content: JSON.stringify({ action: 'final', message: 'nothing to do', confidence: 0.9 }), usage: null });
    const run = await runCli(['run', flow, '--input', 'hello'], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^ {2}#1 {2}final .*\d+ ms$/m);
    expect(run.stderr).not.toContain('tokens');
  });
});
