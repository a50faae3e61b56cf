// End-to-end tests of `redflow replay --steps` on real run logs: the real CLI (`node bin/redflow.js`,
// which runs the compiled dist/: `npm test` builds it first; with plain vitest, run `npm run build`
// before) runs order-status offline, then replays each log step by step, as text and as JSON.
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ORDER_ANSWER, assertBuilt, example, redflow, tempDirs, writeIn } from './cliHarness.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** The logs replayed below, one per kind of run, by name. */
const logs: Record<'finished' | 'failingTool' | 'invalidAnswer' | 'iterationLimit', string> = { finished: '', failingTool: '', invalidAnswer: '', iterationLimit: '' };
let cwd = '';

/** Runs order-status with `script` (the example's own answers when undefined) and returns its log. */
async function runOrderStatus(traceId: string, input: string, script?: unknown[]): Promise<string> {
  const args = ['run', example('order-status'), '--input', input, '--trace-id', traceId];
  if (script) args.push('--script', await writeIn(cwd, `${traceId}.answers.json`, script));
  const result = await redflow(args, { cwd });
  // 0: the run answered; 1: it was blocked (the invalid answer); 2: escalated (the iteration limit). Anything else is a broken setup.
  if (result.code !== 0 && result.code !== 1 && result.code !== 2) throw new Error(`run ${traceId} exited ${result.code}: ${result.stderr}`);
  return path.join(cwd, '.redflow', 'runs', `${traceId}.jsonl`);
}

beforeAll(async () => {
  assertBuilt();
  cwd = await dirs.make();
  const lookUp = { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.5 };
  [logs.finished, logs.failingTool, logs.invalidAnswer, logs.iterationLimit] = await Promise.all([
    runOrderStatus('steps-ok', 'Where is order A-1001?'),
    runOrderStatus('steps-tool-error', 'Where is order Z-9999?', [
      { action: 'tool', tool: 'lookup_order', input: { orderId: 'Z-9999' }, confidence: 0.5 },
      { action: 'final', message: 'There is no order Z-9999.', confidence: 0.9 },
    ]),
    runOrderStatus('steps-invalid', 'x', ['not json']),
    // order-status allows 5 iterations: five good tool calls and no final answer.
    runOrderStatus('steps-limit', 'Where is order A-1001?', Array.from({ length: 5 }, () => lookUp)),
  ]);
});

interface StepsJson {
  events: number;
  problems: unknown[];
  outcome: { status: string; reason: string; answer?: string; error?: { code: string } } | null;
  traceId: string;
  startedAt: string;
  input: unknown;
  systemPrompt: string | null;
  iterations: {
    iteration: number;
    messages: { role: string; content: string }[];
    model: { text: string; durationMs: number; attempts: number | null; verdict: { kind: string; tool?: string; error?: { code: string } } } | null;
    tool: { tool: string; input: unknown; result: { ok: boolean; output?: unknown; error?: { code: string; message: string } } | null } | null;
    failure: { step: string; error: { code: string } | null } | null;
  }[];
  memory: unknown;
  ending: { event: string; outcome: unknown } | null;
  resumedAfter: number[];
}

async function stepsJson(log: string): Promise<StepsJson> {
  const result = await redflow(['replay', log, '--steps', '--json'], { cwd });
  if (result.code !== 0) throw new Error(`replay --steps --json exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as StepsJson;
}

describe.concurrent('redflow replay --steps', () => {
  it('should print what the model saw and answered and what each tool got and returned, for a finished run', async ({ expect }) => {
    const result = await redflow(['replay', logs.finished, '--steps'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const out = result.stdout;
    expect(out).toMatch(/^run steps-ok {2}started \S+ {2}12 events\n/);
    expect(out).toContain('input: "Where is order A-1001?"');
    // The system prompt once, cut, then each iteration with the messages after it.
    expect(out.match(/^system prompt \(\d+ characters/gm)).toHaveLength(1);
    expect(out).toContain('--full shows them]');
    expect(out.match(/^── #\d ──$/gm)).toEqual(['── #1 ──', '── #2 ──', '── #3 ──']);
    expect(out).toContain('    user: Where is order A-1001?\n');
    expect(out).toContain('    assistant: {"action":"tool","tool":"lookup_order","input":{"orderId":"A-1001"}}\n    user: Observation from lookup_order:\n');
    expect(out).toContain('    {"action":"tool","tool":"lookup_order","input":{"orderId":"A-1001"},"confidence":0.55}\n  verdict: valid tool call (lookup_order)');
    expect(out).toMatch(/^ {4}output \(\d+ ms\): \{"orderId":"A-1001","status":"shipped"/m);
    expect(out).toContain('  verdict: final answer');
    expect(out).toContain('outcome: done (final_answer)');
    expect(out).toContain(`answer: ${ORDER_ANSWER}`);
    expect(out).not.toContain('✖');
  });

  it('should print long texts whole with --full, and refuse --full without --steps', async ({ expect }) => {
    const [full, alone] = await Promise.all([
      redflow(['replay', logs.finished, '--steps', '--full'], { cwd }),
      redflow(['replay', logs.finished, '--full'], { cwd }),
    ]);
    expect(full.code, full.stderr).toBe(0);
    expect(full.stdout).not.toContain('--full shows them');
    expect(full.stdout).toContain('  Instructions:\n  You help customers of a web shop find out where their order is. Be brief.');
    expect(alone.code).toBe(64);
    expect(alone.stderr).toContain('--full goes with --steps');
  });

  it('should mark a failed tool call with ✖ and its code, and show its error', async ({ expect }) => {
    const result = await redflow(['replay', logs.failingTool, '--steps'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('── #1 ──  ✖ TOOL_FAILED');
    expect(result.stdout).toMatch(/^ {4}✖ error \(\d+ ms\): TOOL_FAILED: .*no order Z-9999/m);
    // The next iteration shows the model the error as its observation.
    expect(result.stdout).toMatch(/user: Observation from lookup_order:\n {6}error TOOL_FAILED: .*no order Z-9999/);
    expect(result.stdout).toContain('── #2 ──\n');
    expect(result.stdout).toContain('outcome: done (final_answer)');
  });

  it('should show an answer the core rejected, with its code and hint, as why the run ended', async ({ expect }) => {
    const result = await redflow(['replay', logs.invalidAnswer, '--steps'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('── #1 ──  ✖ INVALID_JSON');
    expect(result.stdout).toContain('  model answered (');
    expect(result.stdout).toContain('    not json\n  verdict: ✖ rejected: INVALID_JSON: ');
    expect(result.stdout).toContain('outcome: blocked (invalid_answer) INVALID_JSON');
    expect(result.stdout).toMatch(/^ {2}hint: /m);
  });

  it('should mark the iteration in which the run ended, after a good tool call, with the outcome’s code, as text and JSON', async ({ expect }) => {
    const [text, json] = await Promise.all([redflow(['replay', logs.iterationLimit, '--steps'], { cwd }), stepsJson(logs.iterationLimit)]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.match(/^── #\d ──.*$/gm)).toEqual(['── #1 ──', '── #2 ──', '── #3 ──', '── #4 ──', '── #5 ──  ✖ ITERATION_OVERFLOW']);
    expect(text.stdout).toMatch(/^ {4}output \(\d+ ms\): \{"orderId":"A-1001"[^\n]*\n {2}✖ the run ended after this iteration: ITERATION_OVERFLOW: no final answer after 5 iterations/m);
    expect(text.stdout).toContain('outcome: escalate (iteration_limit) ITERATION_OVERFLOW');
    expect(json.iterations.map((it) => it.failure)).toEqual([null, null, null, null, { step: 'ending', error: expect.objectContaining({ code: 'ITERATION_OVERFLOW' }) }]);
    expect(json.iterations[4]?.tool?.result).toMatchObject({ ok: true });
  });

  it('should give scripts the same steps as JSON, texts whole', async ({ expect }) => {
    const [finished, failing, invalid] = await Promise.all([stepsJson(logs.finished), stepsJson(logs.failingTool), stepsJson(logs.invalidAnswer)]);
    expect(Object.keys(finished).sort()).toEqual(
      ['events', 'problems', 'outcome', 'traceId', 'startedAt', 'input', 'parent', 'systemPrompt', 'iterations', 'memory', 'ending', 'resumedAfter'].sort(),
    );
    expect(finished).toMatchObject({ events: 12, problems: [], traceId: 'steps-ok', input: 'Where is order A-1001?', parent: null, memory: null, resumedAfter: [] });
    expect(finished.outcome).toMatchObject({ status: 'done', reason: 'final_answer', answer: ORDER_ANSWER });
    expect(finished.systemPrompt).toMatch(/^You are an execution agent\.[\s\S]*Be brief\.$/);
    expect(finished.iterations.map((it) => [it.iteration, it.model?.verdict.kind, it.tool?.tool ?? null])).toEqual([
      [1, 'tool', 'lookup_order'],
      [2, 'tool', 'track_shipment'],
      [3, 'final', null],
    ]);
    expect(finished.iterations[0]?.messages).toEqual([{ role: 'user', content: 'Where is order A-1001?' }]);
    expect(finished.iterations[2]?.messages).toHaveLength(5);
    expect(finished.iterations[0]?.tool?.result).toMatchObject({ ok: true, output: { orderId: 'A-1001', trackingCode: 'FS-77812' } });

    expect(failing.iterations[0]).toMatchObject({
      tool: { tool: 'lookup_order', input: { orderId: 'Z-9999' }, result: { ok: false, error: { code: 'TOOL_FAILED' } } },
      failure: { step: 'tool', error: { code: 'TOOL_FAILED' } },
    });
    expect(failing.iterations[1]?.failure).toBeNull();

    expect(invalid.iterations).toEqual([
      expect.objectContaining({
        model: expect.objectContaining({ text: 'not json', verdict: expect.objectContaining({ kind: 'rejected', error: expect.objectContaining({ code: 'INVALID_JSON' }) }) }),
        tool: null,
        failure: expect.objectContaining({ step: 'answer' }),
      }),
    ]);
    expect(invalid.ending).toMatchObject({ event: 'run.failed', outcome: { status: 'blocked', reason: 'invalid_answer' } });
  });

  it('should leave replay without --steps as it was', async ({ expect }) => {
    const result = await redflow(['replay', logs.finished], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('── #');
    expect(result.stdout).toMatch(/^ {2}#1 {2}tool {3}lookup_order/m);
  });
});
