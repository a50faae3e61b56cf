import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseExpectations } from '../../src/evals/caseFile.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { codeBlocks, readPage } from './docPages.js';

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

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-eval-doc-'));
  await cp(path.join(REPO_ROOT, 'examples', 'order-status'), path.join(dir, 'examples', 'order-status'), { recursive: true });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs each `npx redflow …` line of a block, in order; returns the last result. */
async function runBlock(code: string) {
  let last;
  for (const command of code.split('\n').filter((line) => line.startsWith('npx redflow '))) {
    // The page's quoted inputs are one argument each.
    const args = [...command.slice('npx redflow '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
    last = await runCli(args, { cwd: dir, timeoutMs: 60_000 });
    if (last.code !== 0 && !args.includes('--min-score')) throw new Error(`${command}: exit ${String(last.code)}\n${last.stderr}`);
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
    const edited = yamlBlocks[0] as { code: string };
    await writeFile(path.join(dir, /^# (\S+)/.exec(edited.code)?.[1] ?? 'missing'), edited.code);
    // The changed flow: the example's, with the nodes the page shows changed.
    const flowFile = path.join(dir, 'examples', 'order-status', 'flow.json');
    const flow = JSON.parse(await readFile(flowFile, 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
    const changes = JSON.parse(changedNodes.code) as Record<string, Record<string, unknown>>;
    flow.nodes = flow.nodes.map((node) => {
      const change = changes[node.id];
      if (change === undefined) return node;
      return { ...node, config: node.id === 'model' ? change : { ...node.config, ...change } };
    });
    await writeFile(path.join(dir, 'examples', 'order-status', 'flow.changed.json'), JSON.stringify(flow));

    const result = await runBlock(evalBlock.code);
    expect(result?.code, result?.stderr).toBe(1);
    expect(result?.stdout).toBe(shownTable.code);
    expect(result?.stderr).toContain('failed: the score 0.625 is below --min-score 0.900');
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8')) as { cases: { name: string; checks: { name: string; detail: string }[] }[] };
    expect(report.cases[2]?.checks.find((check) => check.name === 'tools')?.detail).toBe('called lookup_order; expected lookup_order → track_shipment (1/2 in order)');
    expect(await readFile(path.join(dir, 'junit.xml'), 'utf8')).toContain('tests="3" failures="3" errors="0"');
    expect(await readFile(path.join(dir, 'report.html'), 'utf8')).toContain('<a href="evals/runs/two.jsonl">log</a>');
  }, 120_000);
});
