import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseExpectations } from '../../src/evals/caseFile.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { codeBlocks, readPage, redflowArgs, redflowLines } from './docPages.js';
import { makePageChanges } from './evalSuitesPage.js';

// docs/eval-suites.md as written: its commands, run in order on a copy of the example, record
// three runs, make them a suite, edit a case and run the suite against the changed flow the page
// shows, printing the table the page shows and exiting 1 below --min-score.

const page = readPage('docs/eval-suites.md');
const blocks = codeBlocks(page);
const shell = blocks.filter((block) => block.lang === 'sh');
const evalBlock = shell.find((block) => block.code.includes('npx redflow eval evals/orders'));
const shownTable = evalBlock === undefined ? undefined : blocks.slice(blocks.indexOf(evalBlock) + 1).find((block) => block.lang === '');
const yamlBlocks = blocks.filter((block) => block.lang === 'yaml');
const changedNodes = blocks.find((block) => block.lang === 'json');
const shownWhy = blocks.find((block) => block.lang === '' && block.code.includes('fork it there:'));
const forkBlock = shell.find((block) => block.code.includes('npx redflow fork evals/orders'));
const PAGE_MODEL_URL = 'http://localhost:11434/v1';

let dir: string;
let model: FakeChatServer;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-doc-'));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'examples', 'order-status'), { recursive: true });
  // The page's local model server: a fake one speaking the OpenAI wire protocol, which tracks the parcel once it knows the order.
  model = await startFakeChatCompletionsServer();
  model.respondWith((request) => {
    const tracked = JSON.stringify(request.body).includes('Lyon sorting centre');
    const answer = tracked
      ? { action: 'final', message: 'Order A-1001 shipped with FastShip; it is in Lyon and due on 2026-11-23.', confidence: 0.9 }
      : { action: 'tool', tool: 'track_shipment', input: { trackingCode: 'FS-77812' }, confidence: 0.8 };
    return { kind: 'completion', content: JSON.stringify(answer) };
  });
});
afterAll(async () => {
  await model.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Runs each `npx redflow …` line of a block, in order; returns the last result. */
async function runBlock(code: string) {
  let last;
  for (const command of redflowLines(code)) {
    const args = redflowArgs(command).map((arg) => arg.replace(PAGE_MODEL_URL, model.baseUrl));
    last = await runCli(args, { cwd: dir, timeoutMs: 60_000 });
    if (last.code !== 0 && !args.includes('--min-score') && args[0] !== 'diff') throw new Error(`${command}: exit ${String(last.code)}\n${last.stderr}`);
  }
  return last;
}

describe('docs/eval-suites.md', () => {
  it('should show expectations files that are valid', () => {
    expect(yamlBlocks.length).toBeGreaterThanOrEqual(2);
    for (const block of yamlBlocks) expect(() => parseExpectations(`line ${block.line}`, block.code)).not.toThrow();
  });

  it('should record, add, change and evaluate as it says, printing the table it shows', async () => {
    if (evalBlock === undefined || shownTable === undefined || changedNodes === undefined) throw new Error('docs/eval-suites.md has lost its eval block, its table or its changed nodes');
    await runBlock(shell[0]?.code ?? '');
    const prefilled = parseYaml(await readFile(path.join(dir, 'evals', 'orders', 'two.eval.yaml'), 'utf8')) as Record<string, unknown>;
    expect(prefilled).toMatchObject({ tools: ['lookup_order', 'track_shipment'], status: 'done', answer: { contains: expect.stringContaining('FS-77812') } });
    // The edited case, where the page's first YAML block says it goes.
    await makePageChanges(dir, (yamlBlocks[0] as { code: string }).code, changedNodes.code);

    const result = await runBlock(evalBlock.code);
    expect(result?.code, result?.stderr).toBe(1);
    expect(result?.stdout).toBe(shownTable.code);
    expect(result?.stderr).toContain('failed: the score 0.625 is below --min-score 0.900');
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8')) as { cases: { name: string; checks: { name: string; detail: string }[] }[] };
    expect(report.cases[2]?.checks.find((check) => check.name === 'tools')?.detail).toBe('called lookup_order; expected lookup_order → track_shipment (1/2 in order)');
    expect(await readFile(path.join(dir, 'junit.xml'), 'utf8')).toContain('tests="3" failures="3" errors="0"');
    expect(await readFile(path.join(dir, 'report.html'), 'utf8')).toContain('<a href="evals/runs/two.jsonl">log</a>');
    // Why each case failed, worst first, and the fork of the worst at the iteration that went wrong, as the page shows them.
    if (shownWhy === undefined) throw new Error('docs/eval-suites.md has lost its why lines');
    expect(result?.stderr).toContain(shownWhy.code);
  }, 120_000);

  it('should fork the worst case at the iteration that went wrong with another model, as the eval said', async () => {
    if (forkBlock === undefined || shownWhy === undefined) throw new Error('docs/eval-suites.md has lost its fork of the worst case');
    // The fork the page runs is the one the eval's last why line gave, with a model named.
    const suggested = /fork it there: redflow (fork \S+ --at \d+ --flow \S+)/.exec(shownWhy.code)?.[1];
    expect(forkBlock.code).toContain(`npx redflow ${suggested ?? 'missing'} --model `);
    const [diffCommand, treeCommand] = forkBlock.code.split('\n').slice(1);
    await runBlock(forkBlock.code.split('\n')[0] ?? '');
    // The new model was asked from iteration 2 on, having seen the order looked up at iteration 1.
    expect(JSON.stringify(model.requests[0]?.body)).toContain('FS-77812');
    const diff = await runBlock(diffCommand ?? '');
    expect(diff?.code, diff?.stderr).toBe(1);
    // This model tracked the parcel as the recorded run did: the runs part only at the answer, tokens aside.
    expect(diff?.stdout).toMatch(/#2 +tool track_shipment .* tool track_shipment/);
    const tree = await runBlock(treeCommand ?? '');
    expect(tree?.stdout).toContain('└─ fork at #2 → run ');
  }, 120_000);
});
