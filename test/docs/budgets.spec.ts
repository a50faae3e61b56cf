import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentCoreReactConfig } from '../../src/contracts/schema-types.js';
import { validateFlow } from '../../src/flows/validateFlow.js';
import { runBudgetFor } from '../../src/runtime/runBudgetFor.js';
import { parseReactStepRequest } from '../../src/stepService/parseReactStepRequest.js';
import { REPO_ROOT, STACK_FRAME, runCli } from '../support/cli.js';
import { validFlow } from '../flows/flowFixtures.js';
import { codeBlocks, section } from './docPages.js';

// docs/budgets.md: its commands run as written (the built CLI, from the repository's root) and
// print the lines the page shows; its agent config validates in a flow and prices as it says.

const stopping = codeBlocks(section('docs/budgets.md', '## A run stopping at its budget'));
const setting = codeBlocks(section('docs/budgets.md', '## Setting a budget')).filter((block) => block.lang === 'json');
const session = codeBlocks(section('docs/budgets.md', '## A budget for a step-service session')).filter((block) => block.lang === 'json');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-budget-doc-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A documented command line as its arguments, its log put in the test's folder. */
function argsOf(line: string): string[] {
  const args = [...line.slice('redflow '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
  return args.map((arg) => (arg.endsWith('.jsonl') ? path.join(dir, arg) : arg));
}

describe('the budgets page', () => {
  it('should run its commands as written and print what it shows: the run stopped at its budget', async () => {
    const commands = (stopping.find((block) => block.lang === 'sh')?.code ?? '').split('\n').filter((line) => line.startsWith('redflow '));
    const shown = (stopping.find((block) => block.lang === 'text')?.code ?? '').split('\n').filter((line) => line !== '');
    expect(commands).toHaveLength(2);
    expect(shown).toHaveLength(2);

    const [run, replay] = commands.map(argsOf);
    const ran = await runCli(run ?? [], { cwd: REPO_ROOT });
    expect(ran.stderr).not.toMatch(STACK_FRAME);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('lookup: {"order":"A-1004"');
    const replayed = await runCli(replay ?? [], { cwd: REPO_ROOT });
    expect(replayed.code, replayed.stderr).toBe(0);
    for (const line of shown) expect(replayed.stdout.split('\n')).toContain(line);
  });

  it('should show an agent config that validates in a flow, with the prices it says', async () => {
    expect(setting).toHaveLength(1);
    const config = JSON.parse(setting[0]?.code ?? '{}') as AgentCoreReactConfig & Record<string, unknown>;
    const flow = validFlow();
    flow.nodes = flow.nodes.map((node) => (node.type === 'agent.core' ? { ...node, config } : node));
    const validation = validateFlow(flow);
    expect(validation.ok, JSON.stringify(validation)).toBe(true);

    const budget = await runBudgetFor(config, 'gpt-4o-mini-2024-07-18');
    expect(budget).toMatchObject({ maxTokens: 20_000, maxCostUsd: 0.05 });
    expect(budget?.priceOf('llama3.1:8b')).toEqual({ input: 0, output: 0 });
    expect(budget?.priceOf('gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    // A cost limit needs a price: a model nobody priced is refused.
    await expect(runBudgetFor(config, 'mistral-large')).rejects.toMatchObject({ code: 'BUDGET_CONFIG_INVALID' });
  });

  it('should show a step request with a session budget that the step service takes', () => {
    expect(session).toHaveLength(1);
    const request = parseReactStepRequest(JSON.parse(session[0]?.code ?? '{}'));
    expect(request.session_budget).toEqual({ maxTokens: 50_000, maxCost: 0.25 });
  });
});
