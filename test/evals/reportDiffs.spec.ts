import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addEvalCase } from '../../src/evals/addCase.js';
import { readCaseDiffs } from '../../src/evals/caseDiffs.js';
import { reportHtml } from '../../src/evals/html.js';
import type { EvalReport } from '../../src/evals/report.js';
import { runEvalSuite } from '../../src/evals/runSuite.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { REPO_ROOT } from '../support/cli.js';

// An eval report's diffs on a real suite: two cases recorded from order-status, one with its own
// answers and one answered otherwise (a script), run again against order-status as it is; each
// eval run is compared with its recorded run, and the HTML page links each case to its diff.

let dir: string;
let report: EvalReport;
const FLOW = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-diff-'));
  const record = async (name: string, script?: unknown[]) => {
    const log = path.join(dir, 'runs', `${name}.jsonl`);
    const run = await runFlowFile({ flowPath: FLOW, input: 'Where is A-1001?', logPath: log, fsync: 'never', ...(script && { script }) });
    await run.finished();
    await addEvalCase({ log, suite: path.join(dir, 'suite') });
  };
  await record('same');
  // The recorded run answered after one tool call; order-status as it is tracks the shipment first.
  await record('changed', [
    { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.55 },
    { action: 'final', message: 'It shipped with FastShip.', confidence: 0.7 },
  ]);
  report = await runEvalSuite({ suite: path.join(dir, 'suite'), flowPath: FLOW, outDir: path.join(dir, 'out') });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("an eval report's diffs", () => {
  it('should compare each eval run with its recorded run', async () => {
    const diffs = await readCaseDiffs(report);
    expect(diffs.get('same')?.same).toBe(true);
    expect(diffs.get('changed')?.first).toEqual({ iteration: 2, field: 'decision', a: 'final', b: 'tool' });
  });

  it('should link each case to a section of the page with its diff, the first difference marked', async () => {
    const html = reportHtml(report, dir, await readCaseDiffs(report));
    expect(html).toContain('<a href="out/changed.jsonl">log</a> · <a href="#diff-changed">diff</a> <small>(#2 decision)</small>');
    expect(html).toContain('<a href="#diff-same">diff</a> <small>(same)</small>');
    const section = html.slice(html.indexOf('<section id="diff-changed">'));
    expect(section).toContain('first difference at #2 decision: recorded <code>&quot;final&quot;</code>, eval <code>&quot;tool&quot;</code>');
    expect(section).toMatch(/<tr class="differs first"><td>▶ #2<\/td><td>final<br><small>\d+ ms<\/small><\/td><td>tool track_shipment<br>/);
    expect(html).not.toMatch(/<script|<link|src=/);
  });

  it('should print, for each failed case, the fork command that starts again at its first difference', async () => {
    const failed = { ...report, cases: report.cases.map((row) => ({ ...row, result: 'fail' as const })) };
    const html = reportHtml(failed, dir, await readCaseDiffs(failed));
    const changed = html.slice(html.indexOf('<section id="diff-changed">'), html.indexOf('<section id="diff-same">'));
    // The recorded log is outside the current folder: its whole path, as `redflow eval` prints it.
    expect(changed).toContain(`<p>fork it there: <code>redflow fork ${path.join(dir, 'suite', 'changed.jsonl')} --at 2 --flow ${path.relative(process.cwd(), FLOW)} --model &lt;json&gt; --log runs/changed-fork.jsonl</code></p>`);
    // A case whose eval run did what its recorded run did has nowhere to fork.
    expect(html.slice(html.indexOf('<section id="diff-same">'))).not.toContain('fork it there');
    // A case that passed gets none.
    expect(reportHtml({ ...report, cases: report.cases.map((row) => ({ ...row, result: 'pass' as const })) }, dir, await readCaseDiffs(report))).not.toContain('fork it there');
  });

  it('should leave out the diff of a case whose eval log is gone', async () => {
    const gone = { ...report, cases: report.cases.map((row) => (row.name === 'same' && row.eval ? { ...row, eval: { ...row.eval, log: path.join(dir, 'nowhere.jsonl') } } : row)) };
    const diffs = await readCaseDiffs(gone);
    expect([...diffs.keys()]).toEqual(['changed']);
    expect(reportHtml(gone, dir, diffs)).not.toContain('#diff-same');
  });
});
