import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, STACK_FRAME, runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// Why a case failed, on the real command: a run recorded with one model, evaluated against a
// changed prompt whose model spends other tokens at every call, takes the same first step and
// answers at once at the second. `redflow eval` says the case first went otherwise at #2 (its
// decision), not at #1 (its tokens), and gives the fork of the recorded run at #2.

let dir: string;
let model: FakeChatServer;
const cli = (args: string[]) => runCli(args, { cwd: dir, timeoutMs: 60_000 });

/** The recorded prompt tracks the parcel; the changed one answers once the order is looked up, and says more. */
function decide(body: unknown) {
  const messages = (body as { messages?: { role: string; content: string }[] }).messages ?? [];
  const hurried = messages.some((m) => m.content.includes('Answer at once'));
  const steps = messages.filter((m) => m.role === 'assistant').length;
  const answer =
    steps === 0
      ? { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.6 }
      : steps === 1 && !hurried
        ? { action: 'tool', tool: 'track_shipment', input: { trackingCode: 'FS-77812' }, confidence: 0.8 }
        : { action: 'final', message: 'Order A-1001 shipped with FastShip.', confidence: 0.9 };
  const usage = hurried ? { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 } : { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  return { kind: 'completion' as const, content: JSON.stringify(answer), usage };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-why-'));
  model = await startFakeChatCompletionsServer();
  model.respondWith((request) => decide(request.body));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'agent'), { recursive: true });
  const flow = JSON.parse(await readFile(path.join(dir, 'agent', 'flow.json'), 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
  const withAgent = (instructions: string) => ({
    ...flow,
    nodes: flow.nodes.map((node) =>
      node.id === 'agent'
        ? { ...node, config: { ...node.config, instructions } }
        : node.id === 'model'
          ? { ...node, config: { provider: 'openai-compatible', baseUrl: model.baseUrl, model: 'test-model', maxRetries: 0 } }
          : node,
    ),
  });
  await writeFile(path.join(dir, 'agent', 'flow.recorded.json'), JSON.stringify(withAgent('Find where the order is.')));
  await writeFile(path.join(dir, 'agent', 'flow.changed.json'), JSON.stringify(withAgent('Answer at once.')));
}, 60_000);

afterAll(async () => {
  await model.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('redflow eval: why a case failed', () => {
  it('should say where the eval run first went otherwise, tokens aside, and give the fork of the recorded run there', async () => {
    const recorded = await cli(['run', 'agent/flow.recorded.json', '--input', 'Where is A-1001?', '--log', 'runs/one.jsonl']);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect((await cli(['eval', 'add', 'runs/one.jsonl', '--suite', 'evals'])).code).toBe(0);

    const result = await cli(['eval', 'evals', '--flow', 'agent/flow.changed.json', '--out', 'eval-runs', '--min-score', '0.9', '--json', 'report.json']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('why one 0.');
    expect(result.stderr).toContain(': first difference at #2, decision: recorded "tool", eval "final" (redflow diff evals/one.jsonl eval-runs/one.jsonl)');
    expect(result.stderr).toContain('fork it there: redflow fork evals/one.jsonl --at 2 --flow agent/flow.changed.json --model <json> --log runs/one-fork.jsonl');
    expect(result.stderr).not.toMatch(STACK_FRAME);
    // The JSON report says it too, for CI.
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8')) as { cases: { firstDifference?: unknown }[] };
    expect(report.cases[0]?.firstDifference).toEqual({ iteration: 2, field: 'decision', a: 'tool', b: 'final' });
    // The diff itself counts the tokens: it parts at #1.
    const diff = await cli(['diff', 'evals/one.jsonl', 'eval-runs/one.jsonl', '--json']);
    expect((JSON.parse(diff.stdout) as { first: { iteration: number; field: string } }).first).toMatchObject({ iteration: 1, field: 'tokens' });
  }, 60_000);

  it('should say nothing more for a suite that passes', async () => {
    const result = await cli(['eval', 'evals', '--flow', 'agent/flow.recorded.json', '--out', 'eval-runs-again']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('why ');
    expect(result.stderr).not.toContain('fork it there');
  }, 60_000);
});
