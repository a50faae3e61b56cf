import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { addEvalCase } from '../../src/evals/addCase.js';
import { reportHtml } from '../../src/evals/html.js';
import { runEvalSuite } from '../../src/evals/runSuite.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { REPO_ROOT } from '../support/cli.js';

// A case's cost limit on a real suite: order-status recorded, then run again against a copy whose
// agent has a budget pricing its model (the runs' tokens are the tokenizer's estimates, priced at
// $1000 per million), and against order-status as it is, which prices nothing.

let dir: string;
const FLOW = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');
let priced: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-cost-'));
  await cp(path.dirname(FLOW), path.join(dir, 'priced'), { recursive: true });
  priced = path.join(dir, 'priced', 'flow.json');
  const flow = JSON.parse(await readFile(priced, 'utf8')) as { nodes: { id: string; config: Record<string, unknown> }[] };
  for (const node of flow.nodes) {
    if (node.id === 'agent') node.config.budget = { maxTokens: 100_000, prices: { scripted: { input: 1000, output: 1000 } } };
    if (node.id === 'model') node.config.model = 'scripted';
  }
  await writeFile(priced, JSON.stringify(flow));
  const cases = { within: 'limits:\n  cost: 10\n', over: 'limits:\n  cost: 0.5\n', 'own-price': 'limits:\n  cost: 0.01\n  price: { input: 0.15, output: 0.6 }\n' };
  for (const [name, expectations] of Object.entries(cases)) {
    const log = path.join(dir, 'runs', `${name}.jsonl`);
    await (await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', logPath: log, fsync: 'never' })).finished();
    await addEvalCase({ log, suite: path.join(dir, 'suite'), name });
    await writeFile(path.join(dir, 'suite', `${name}.eval.yaml`), expectations);
  }
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("an eval case's cost limit", () => {
  it("should price each eval run by the flow's budget, or by the case's own price, and check it against the limit", async () => {
    const report = await runEvalSuite({ suite: path.join(dir, 'suite'), flowPath: priced, outDir: path.join(dir, 'out-priced') });
    const byName = Object.fromEntries(report.cases.map((row) => [row.name, row]));
    const flowCost = byName.within?.eval?.costUsd ?? 0;
    expect(flowCost).toBeGreaterThan(0.5);
    expect(byName.within).toMatchObject({ result: 'pass', checks: [{ name: 'limits.cost', pass: true }] });
    expect(byName.over).toMatchObject({ result: 'fail', checks: [{ name: 'limits.cost', pass: false, detail: expect.stringMatching(/^\$[\d.]+ \(limit \$0\.5\)$/) as unknown }] });
    // The case's price is used over the flow's: 0.15 and 0.6 per million tokens.
    const own = byName['own-price']?.eval;
    expect(own?.costUsd).toBeCloseTo(((own?.promptTokens ?? 0) * 0.15 + (own?.completionTokens ?? 0) * 0.6) / 1e6, 12);
    expect(byName['own-price']?.result).toBe('pass');
    // The recorded runs had no budget: only the case with a price of its own has a recorded cost.
    expect(byName.within?.recorded?.costUsd).toBeUndefined();
    expect(report.cost?.eval).toBeCloseTo(report.cases.reduce((sum, row) => sum + (row.eval?.costUsd ?? 0), 0), 12);
    // The page shows each cost after its tokens, and the suite's.
    const html = reportHtml(report);
    expect(html).toContain(`<td class="num">${byName.within?.eval?.tokens} $${Number(flowCost.toPrecision(4))} <small>(recorded`);
    expect(html).toMatch(/<p>tokens: \d+ \$[\d.]+ \(recorded runs \d+ \$[\d.e-]+\)/);
  });

  it('should make a case with a cost limit and no price an error naming it, and still report the rest', async () => {
    const report = await runEvalSuite({ suite: path.join(dir, 'suite'), flowPath: FLOW, outDir: path.join(dir, 'out-plain') });
    const byName = Object.fromEntries(report.cases.map((row) => [row.name, row]));
    expect(byName.within).toMatchObject({ result: 'error', error: { code: ErrorCode.EVAL_CASE_NO_PRICE, message: expect.stringContaining('case "within"') as unknown }, eval: { status: 'done' } });
    expect(byName['own-price']).toMatchObject({ result: 'pass', eval: { costUsd: 0 } });
    expect(report.counts).toEqual({ total: 3, passed: 1, failed: 0, errors: 2 });
  });
});
