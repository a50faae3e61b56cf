import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import type { EvalReport } from '../../src/evals/report.js';
import { REPO_ROOT, STACK_FRAME, readVerifiedLog, runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

// `redflow eval` end to end, on the real command: 20 runs of the order-status example recorded
// with its scripted model become a suite (`eval add`); the suite scores 1 against the recorded
// flow; then the prompt changes and the model is a local server speaking OpenAI's wire protocol,
// which, told to answer at once, skips the tools for the B orders: those cases regress, and the
// JSON report, the JUnit XML, the HTML page and the exit codes say so.

const CASES = 20;
const CHANGED_INSTRUCTIONS = 'You help customers of a web shop find out where their order is. Answer at once.';
const RECORDED_ANSWER = 'Order A-1001 shipped with FastShip (tracking FS-77812). It was last scanned at the Lyon sorting centre and should arrive on 2026-11-23.';
const caseName = (i: number) => `case-${String(i).padStart(2, '0')}`;
/** Even cases ask about an A order, odd ones about a B order. */
const inputOf = (i: number) => (i % 2 === 0 ? `Where is my order A-1001? (ticket ${i})` : `Where is my order B-20${String(i).padStart(2, '0')}?`);
const regressed = Array.from({ length: CASES }, (_, i) => i).filter((i) => i % 2 === 1).map(caseName);

let dir: string;
let model: FakeChatServer;
const cli = (args: string[]) => runCli(args, { cwd: dir, timeoutMs: 120_000 });

/** The fake model: the example's path (two tools, then the recorded answer), unless told to answer at once about a B order. */
function decide(body: unknown) {
  const messages = ((body as { messages?: { role: string; content: string }[] }).messages ?? []);
  const text = messages.map((m) => m.content).join('\n');
  const hurried = text.includes('Answer at once') && /order B-\d+/.test(text);
  const steps = messages.filter((m) => m.role === 'assistant').length;
  const answer = hurried
    ? { action: 'final', message: 'Your order is on its way.', confidence: 0.9 }
    : steps === 0
      ? { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.6 }
      : steps === 1
        ? { action: 'tool', tool: 'track_shipment', input: { trackingCode: 'FS-77812' }, confidence: 0.8 }
        : { action: 'final', message: RECORDED_ANSWER, confidence: 0.93 };
  return { kind: 'completion' as const, content: JSON.stringify(answer) };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-e2e-'));
  model = await startFakeChatCompletionsServer();
  model.respondWith((request) => decide(request.body));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'agent'), { recursive: true });
  const flow = JSON.parse(await readFile(path.join(dir, 'agent', 'flow.json'), 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
  // The changed agent: another prompt, and a model behind an OpenAI-compatible endpoint.
  const changed = {
    ...flow,
    nodes: flow.nodes.map((node) =>
      node.id === 'agent'
        ? { ...node, config: { ...node.config, instructions: CHANGED_INSTRUCTIONS } }
        : node.id === 'model'
          ? { ...node, config: { provider: 'openai-compatible', baseUrl: model.baseUrl, model: 'test-model', maxRetries: 0 } }
          : node,
    ),
  };
  await writeFile(path.join(dir, 'agent', 'flow.changed.json'), JSON.stringify(changed, null, 2));
  // The recorded runs: the example as it is, with its scripted model.
  await mkdir(path.join(dir, 'recorded'));
  for (let i = 0; i < CASES; i++) {
    const run = await runFlowFile({ flowPath: path.join(dir, 'agent', 'flow.json'), input: inputOf(i), logPath: path.join(dir, 'recorded', `${caseName(i)}.jsonl`), fsync: 'never' });
    await run.finished();
  }
}, 120_000);

afterAll(async () => {
  await model.stop();
  await rm(dir, { recursive: true, force: true });
});

const readReport = async (file: string) => JSON.parse(await readFile(path.join(dir, file), 'utf8')) as EvalReport & { verdict: { ok: boolean; reasons: string[]; regressions: { name: string }[] } };

describe('redflow eval', () => {
  it('should turn recorded runs into cases with `eval add`, expectations prefilled from each run', async () => {
    const logs = Array.from({ length: CASES }, (_, i) => path.join('recorded', `${caseName(i)}.jsonl`));
    const added = await cli(['eval', 'add', ...logs, '--suite', 'suite']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout.trim().split('\n')).toHaveLength(CASES);
    expect(await readFile(path.join(dir, 'suite', 'case-03.eval.yaml'), 'utf8')).toMatch(
      new RegExp(`answer:\\n  contains: ${RECORDED_ANSWER.replace(/[.()]/g, '\\$&')}\\ntools:\\n  - lookup_order\\n  - track_shipment\\nstatus: done\\n$`),
    );
    const again = await cli(['eval', 'add', logs[0] as string, '--suite', 'suite']);
    expect(again.code).toBe(65);
    expect(again.stderr).toContain('error EVAL_CASE_EXISTS: case "case-00"');
  }, 60_000);

  it('should name a case with --name and expect the exact answer with --exact; print its usage with --help', async () => {
    const named = await cli(['eval', 'add', path.join('recorded', 'case-00.jsonl'), '--suite', 'other', '--name', 'first', '--exact']);
    expect(named.code, named.stderr).toBe(0);
    expect(await readFile(path.join(dir, 'other', 'first.eval.yaml'), 'utf8')).toContain(`answer:\n  exact: ${RECORDED_ANSWER}\n`);
    const two = await cli(['eval', 'add', path.join('recorded', 'case-00.jsonl'), path.join('recorded', 'case-01.jsonl'), '--suite', 'other', '--name', 'x']);
    expect(two.code).toBe(64);
    const usage = await cli(['eval', '--help']);
    expect(usage.code).toBe(0);
    expect(usage.stdout).toMatch(/^usage: redflow eval <suite> /);
  }, 60_000);

  it('should score the suite 1 against the recorded flow, and write that report as a baseline', async () => {
    const result = await cli(['eval', 'suite', '--flow', 'agent/flow.json', '--concurrency', '3', '--json', 'baseline.json', '--out', 'runs-baseline']);
    expect(result.code, result.stderr).toBe(0);
    const report = await readReport('baseline.json');
    expect(report).toMatchObject({ score: 1, counts: { total: CASES, passed: CASES, failed: 0, errors: 0 }, tokens: { recorded: 0, eval: 0, judge: 0 }, seam: 'start' });
    expect(result.stderr.trim().split('\n').filter((line) => /^\[\s*\d+\/20\] pass /.test(line))).toHaveLength(CASES);
  }, 120_000);

  it('should find the cases the changed prompt regressed, below the baseline: exit 1, with the JSON report, JUnit XML and HTML page', async () => {
    const result = await cli([
      'eval', 'suite', '--flow', 'agent/flow.changed.json', '--concurrency', '4', '--out', 'runs-changed',
      '--json', 'out/report.json', '--junit', 'out/junit.xml', '--html', 'out/report.html', '--baseline', 'baseline.json',
    ]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toMatch(STACK_FRAME);
    expect(result.stderr).toContain("failed: the score 0.667 is below the baseline's 1.000");
    const report = await readReport('out/report.json');
    expect(report.score).toBeCloseTo((10 + 10 / 3) / 20, 9);
    expect(report.counts).toEqual({ total: CASES, passed: 10, failed: 10, errors: 0 });
    expect(report.verdict.regressions.map((r) => r.name)).toEqual(regressed);
    const b = report.cases.find((row) => row.name === 'case-01');
    expect(b).toMatchObject({ result: 'fail', recorded: { status: 'done', tools: ['lookup_order', 'track_shipment'], tokens: 0 }, eval: { status: 'done', tools: [], answer: 'Your order is on its way.', tokens: 15 } });
    expect(b?.score).toBeCloseTo(1 / 3, 9);
    expect(b?.checks.map((check) => [check.name, check.pass, check.score])).toEqual([['answer.contains', false, 0], ['tools', false, 0], ['status', true, 1]]);
    // Tokens per case and per suite, beside the recorded runs' (the scripted model reports none).
    expect(report.cases.find((row) => row.name === 'case-02')).toMatchObject({ result: 'pass', score: 1, eval: { tokens: 45, iterations: 3 }, recorded: { tokens: 0 } });
    expect(report.tokens).toEqual({ recorded: 0, eval: 10 * 45 + 10 * 15, judge: 0 });
    expect(result.stdout).toContain('regressed: case-01 1.000 → 0.333');
    expect(result.stdout).toMatch(/^case-01\s+fail\s+0\.333\s+0\.00\s+done → done\s+15 \(recorded 0\)$/m);
    // Every eval run is a run with its own verified log.
    const logs = (await readdir(path.join(dir, 'runs-changed'))).filter((name) => name.endsWith('.jsonl'));
    expect(logs).toHaveLength(CASES);
    const { events } = await readVerifiedLog(path.join(dir, 'runs-changed', 'case-01.jsonl'));
    expect(events[0]?.data).toMatchObject({ input: inputOf(1) });
    expect(events.at(-1)?.data.outcome?.answer).toBe('Your order is on its way.');

    const junit = await readFile(path.join(dir, 'out', 'junit.xml'), 'utf8');
    expect(junit).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="redflow eval suite" tests="20" failures="10" errors="0"/);
    expect(junit.match(/<testcase /g)).toHaveLength(CASES);
    expect(junit.match(/<failure /g)).toHaveLength(10);
    expect(junit).toContain('<testcase name="case-01" classname="redflow eval suite"');
    expect(junit).toMatch(/<failure type="eval" message="score 0.333: answer.contains, tools">/);

    const html = await readFile(path.join(dir, 'out', 'report.html'), 'utf8');
    expect(html.match(/<tr class="(pass|fail|error)">/g)).toHaveLength(CASES);
    expect(html).toContain('<a href="../suite/case-01.jsonl">recorded</a> · <a href="../runs-changed/case-01.jsonl">log</a>');
    expect(b?.recorded).toMatchObject({ log: path.join(dir, 'suite', 'case-01.jsonl') });
    // Each case links to its eval run diffed against its recorded run: case-01 answered at once.
    expect(html).toContain('<a href="../runs-changed/case-01.jsonl">log</a> · <a href="#diff-case-01">diff</a> <small>(#1 decision)</small>');
    expect(html.match(/<section id="diff-case-\d+">/g)).toHaveLength(CASES);
    // One self-contained file: nothing loaded from elsewhere.
    expect(html).not.toMatch(/<script|<link|src=/);
  }, 120_000);

  it('should pass or fail on --min-score', async () => {
    const above = await cli(['eval', 'suite', '--flow', 'agent/flow.changed.json', '--concurrency', '4', '--out', 'runs-min-1', '--min-score', '0.6']);
    expect(above.code, above.stderr).toBe(0);
    const below = await cli(['eval', 'suite', '--flow', 'agent/flow.changed.json', '--concurrency', '4', '--out', 'runs-min-2', '--min-score', '0.7']);
    expect(below.code).toBe(1);
    expect(below.stderr).toContain('failed: the score 0.667 is below --min-score 0.700');
  }, 120_000);

  it('should report a broken case as an error row with its code, and still run the rest of the suite', async () => {
    await mkdir(path.join(dir, 'broken'));
    for (const i of [0, 1, 2]) {
      await cp(path.join(dir, 'suite', `${caseName(i)}.jsonl`), path.join(dir, 'broken', `${caseName(i)}.jsonl`));
      await cp(path.join(dir, 'suite', `${caseName(i)}.eval.yaml`), path.join(dir, 'broken', `${caseName(i)}.eval.yaml`));
    }
    await writeFile(path.join(dir, 'broken', 'case-01.eval.yaml'), 'answer:\n  regex: "(unclosed"\n');
    const result = await cli(['eval', 'broken', '--flow', 'agent/flow.json', '--json', 'broken.json', '--junit', 'broken.xml', '--min-score', '0.5']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/\] error 0\.000  case-01  tokens -  EVAL_CASE_INVALID: case "case-01": its answer\.regex does not compile/);
    const report = await readReport('broken.json');
    expect(report.counts).toEqual({ total: 3, passed: 2, failed: 0, errors: 1 });
    expect(report.score).toBeCloseTo(2 / 3, 9);
    expect(report.cases[1]).toMatchObject({ name: 'case-01', result: 'error', error: { code: 'EVAL_CASE_INVALID', path: '/answer/regex' } });
    const junit = await readFile(path.join(dir, 'broken.xml'), 'utf8');
    expect(junit).toContain('tests="3" failures="0" errors="1"');
    expect(junit).toMatch(/<testcase name="case-01"[^>]*>\n\s*<error type="EVAL_CASE_INVALID" message="case &quot;case-01&quot;: its answer.regex does not compile/);
  }, 60_000);

  it('should check a cost limit at the case\'s price, and make a cost limit with no price an error naming the case', async () => {
    await mkdir(path.join(dir, 'costly'));
    for (const i of [0, 1]) await cp(path.join(dir, 'suite', `${caseName(i)}.jsonl`), path.join(dir, 'costly', `${caseName(i)}.jsonl`));
    await writeFile(path.join(dir, 'costly', 'case-00.eval.yaml'), 'limits:\n  cost: 1\n');
    await writeFile(path.join(dir, 'costly', 'case-01.eval.yaml'), 'limits:\n  cost: 1\n  price: { input: 2.5, output: 10 }\n');
    const result = await cli(['eval', 'costly', '--flow', 'agent/flow.json', '--json', 'costly.json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/\] error 0\.000  case-00  tokens \d+ \(recorded \d+\)  EVAL_CASE_NO_PRICE: case "case-00": its limits\.cost cannot be checked/);
    expect(result.stdout).toMatch(/case-01 +pass .* \d+ \$[\d.e-]+ \(recorded \d+ \$[\d.e-]+\)/);
    expect(result.stdout).toMatch(/^tokens \d+ \$[\d.e-]+ \(recorded \d+ \$[\d.e-]+\)/m);
    const report = await readReport('costly.json');
    expect(report.counts).toEqual({ total: 2, passed: 1, failed: 0, errors: 1 });
    expect(report.cases[1]).toMatchObject({ name: 'case-01', checks: [{ name: 'limits.cost', pass: true }] });
  }, 60_000);

  it('should refuse a seam that does not exist with EVAL_SEAM_UNAVAILABLE, a missing suite and a bad baseline', async () => {
    const seam = await cli(['eval', 'suite', '--seam', 'middle']);
    expect(seam.code).toBe(64);
    expect(seam.stderr).toContain('error EVAL_SEAM_UNAVAILABLE: there is no seam "middle"');
    const missing = await cli(['eval', 'no-such-suite']);
    expect(missing.code).toBe(66);
    expect(missing.stderr).toContain('error EVAL_SUITE_NOT_FOUND: there is no suite folder no-such-suite');
    await writeFile(path.join(dir, 'not-a-report.json'), '{"hello": 1}');
    const baseline = await cli(['eval', 'suite', '--baseline', 'not-a-report.json']);
    expect(baseline.code).toBe(65);
    expect(baseline.stderr).toContain('error EVAL_BASELINE_INVALID: the baseline not-a-report.json is not an eval report');
    const score = await cli(['eval', 'suite', '--min-score', '2']);
    expect(score.code).toBe(64);
  }, 60_000);
});
