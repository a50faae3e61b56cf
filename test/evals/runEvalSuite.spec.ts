import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { addEvalCase } from '../../src/evals/addCase.js';
import { runEvalSuite } from '../../src/evals/runSuite.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { REPO_ROOT } from '../support/cli.js';

// The library's runEvalSuite on a suite made with addEvalCase: each case run again from its
// recorded input (here its recorded flow), a judge's verdict and tokens in the row with its call
// logged, limits scored, and a judge that fails making an error row that keeps its eval run.

let dir: string;
const FLOW = path.join(REPO_ROOT, 'examples', 'order-status', 'flow.json');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-lib-'));
  for (const name of ['judged', 'limited', 'misjudged']) {
    const run = await runFlowFile({ flowPath: FLOW, input: `Where is A-1001? (${name})`, logPath: path.join(dir, 'runs', `${name}.jsonl`), fsync: 'never' });
    await run.finished();
    await addEvalCase({ log: path.join(dir, 'runs', `${name}.jsonl`), suite: path.join(dir, 'suite') });
  }
  const judge = (answers: unknown[]) => `answer:\n  judge:\n    model: ${JSON.stringify({ provider: 'scripted', answers })}\n    rubric: Names the carrier.\n`;
  await writeFile(path.join(dir, 'suite', 'judged.eval.yaml'), judge([{ score: 0.75, reason: 'names FastShip' }]));
  await writeFile(path.join(dir, 'suite', 'misjudged.eval.yaml'), judge(['I cannot grade this.']));
  await writeFile(path.join(dir, 'suite', 'limited.eval.yaml'), 'limits:\n  iterations: 2\n  tokens: 0\n');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('runEvalSuite', () => {
  it('should score each case, with the judge logged beside its run, and keep a failed judge as an error row', async () => {
    const seen: string[] = [];
    const report = await runEvalSuite({ suite: path.join(dir, 'suite'), outDir: path.join(dir, 'out'), concurrency: 2, onCase: (row, done, total) => seen.push(`${done}/${total} ${row.name}`) });
    expect(seen.map((line) => line.split(' ')[0])).toEqual(['1/3', '2/3', '3/3']);
    const [judged, limited, misjudged] = report.cases;
    expect(judged).toMatchObject({ name: 'judged', result: 'pass', score: 0.75, judgeTokens: 0, judgeLog: path.join(dir, 'out', 'judged.judge.json'), eval: { status: 'done', log: path.join(dir, 'out', 'judged.jsonl') } });
    expect(JSON.parse(await readFile(path.join(dir, 'out', 'judged.judge.json'), 'utf8'))).toMatchObject({ case: 'judged', verdict: { score: 0.75, pass: true, reason: 'names FastShip' } });
    expect(limited).toMatchObject({ result: 'fail', score: 0.5, checks: [{ name: 'limits.iterations', pass: false, detail: '3 iterations (limit 2)' }, { name: 'limits.tokens', pass: true }] });
    expect(misjudged).toMatchObject({ result: 'error', score: 0, error: { code: ErrorCode.EVAL_JUDGE_ANSWER_INVALID }, eval: { status: 'done' } });
    expect(report.counts).toEqual({ total: 3, passed: 1, failed: 1, errors: 1 });
    expect(report.score).toBeCloseTo((0.75 + 0.5) / 3, 9);
  });

  it('should refuse an output folder that holds eval runs already, writing over none', async () => {
    const before = await readFile(path.join(dir, 'out', 'judged.jsonl'), 'utf8');
    await expect(runEvalSuite({ suite: path.join(dir, 'suite'), outDir: path.join(dir, 'out') })).rejects.toMatchObject({ code: ErrorCode.EVAL_OUT_DIR_NOT_EMPTY });
    expect(await readFile(path.join(dir, 'out', 'judged.jsonl'), 'utf8')).toBe(before);
  });

  it('should refuse a changed flow that does not exist before running any case', async () => {
    await expect(runEvalSuite({ suite: path.join(dir, 'suite'), flowPath: path.join(dir, 'missing.json'), outDir: path.join(dir, 'out-missing') })).rejects.toMatchObject({ code: ErrorCode.FLOW_NOT_FOUND });
  });
});
