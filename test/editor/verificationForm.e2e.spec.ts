/**
 * The agent core's verification and budget fields, in headless Chromium against the real
 * `redflow serve`: set in the General tab (a verifier model node of the flow, a rubric, the
 * failures allowed, a token and cost budget), saved into the flow file, and the run's verification
 * shown with its four checks in the step details.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';
import { HELPER_AGENT_ANSWER, HELPER_AGENT_FILE } from '../support/helperAgentFile.js';

const CHECKS = ['completeness', 'consistency', 'correctness', 'constraints'].map((name) => ({ name, passed: true, basis: `${name} holds` }));

/** The agent's flow: a scripted model that answers at once, and a scripted verifier node `judge`, not connected. */
function verifiedFlow() {
  const flow = echoFlow([{ action: 'final', message: 'Paris.', confidence: 0.9 }]);
  const nodes = flow.nodes.map((node) => (node.id === 'llm' ? { ...node, config: { ...node.config, model: 'gpt-4o-mini' } } : node));
  const judge = { id: 'judge', type: 'model.llm', position: { x: 250, y: -150 }, config: { provider: 'scripted', model: 'judge-model', answers: [], verifications: { 1: { checks: CHECKS } } } };
  return { ...flow, nodes: [...nodes, judge] };
}

let dir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;

describe.skipIf(SKIP_BROWSER)('the verification and budget fields of the agent core, in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-verification-form-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    await writeFile(path.join(flowsDir, 'verified-agent.json'), JSON.stringify(verifiedFlow()));
    await writeFile(path.join(flowsDir, 'helper.agent.md'), HELPER_AGENT_FILE);
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector('[data-testid="flow-select"] option[value="verified-agent"]', { state: 'attached' });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should save the verifier, rubric, failures and budget set in the form, and show the verification in the step details', async () => {
    await page.selectOption('[data-testid="flow-select"]', 'verified-agent');
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('verified-agent');
    await page.locator('[data-testid="canvas"] .react-flow__node[data-id="agent"]').click({ position: { x: 30, y: 12 } });
    await expect.poll(() => page.locator('[data-testid="agent-panel"]').first().getAttribute('data-node-id')).toBe('agent');
    await page.click('[data-testid="tab-button-general"]');

    // Off at first: no rubric or failures to set.
    expect(await page.inputValue('[data-testid="verification-mode"]')).toBe('off');
    expect(await page.locator('[data-testid="verification-rubric"]').count()).toBe(0);
    await page.selectOption('[data-testid="verification-mode"]', 'model');
    await page.fill('[data-testid="verification-model"]', 'judge');
    await page.fill('[data-testid="verification-rubric"]', 'The answer names a city.');
    await page.fill('[data-testid="verification-max-failures"]', '1');
    await page.fill('[data-testid="budget-max-tokens"]', '5000');
    await page.fill('[data-testid="budget-max-cost"]', '0.5');
    await expect.poll(() => page.textContent('[data-testid="config-status"]')).toBe('valid');

    await page.click('[data-testid="save-flow"]');
    const flowFile = path.join(dir, 'flows', 'verified-agent.json');
    const savedAgent = async () => {
      const flow = JSON.parse(await readFile(flowFile, 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
      return flow.nodes.find((node) => node.id === 'agent')?.config;
    };
    await expect.poll(async () => (await savedAgent())?.verification).toEqual({ model: 'judge', rubric: 'The answer names a city.', maxFailures: 1 });
    expect((await savedAgent())?.budget).toEqual({ maxTokens: 5000, maxCost: 0.5 });
    await expect.poll(() => page.getAttribute('[data-testid="diagnostics"]', 'data-ok')).toBe('true');

    // Back to self: the verifier goes, the rest stays.
    await page.selectOption('[data-testid="verification-mode"]', 'self');
    expect(await page.locator('[data-testid="verification-model"]').count()).toBe(0);
    await page.selectOption('[data-testid="verification-mode"]', 'model');
    await page.fill('[data-testid="verification-model"]', 'judge');

    await page.fill('[data-testid="run-input"]', 'What is the capital of France?');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
    await page.click('[data-testid="tab-button-runtime"]');
    await expect.poll(() => page.locator('[data-testid="tab-runtime"] [data-testid="run-outcome"]').textContent()).toBe('done final_answer');
    await page.locator('[data-testid="timeline-row"]').last().click();
    const checks = page.locator('[data-testid="step-details"] [data-testid="step-verification-check"]');
    await expect.poll(() => checks.count()).toBe(4);
    expect(await checks.evaluateAll((all) => all.map((check) => check.getAttribute('data-passed')))).toEqual(['true', 'true', 'true', 'true']);
  }, 60_000);

  it('should list an .agent.md file beside the flows and run it when picked', async () => {
    await page.click('[data-testid="flow-select"]');
    const option = page.locator('[data-testid="flow-select"] optgroup[data-testid="agent-files"] option');
    await expect.poll(() => option.evaluateAll((all) => all.map((o) => (o as HTMLOptionElement).value))).toEqual(['agent:helper.agent.md']);
    await page.selectOption('[data-testid="flow-select"]', 'agent:helper.agent.md');
    // The editor opens the started run: followed live to its end ('finished'), or, when the scripted
    // agent has already ended by the time it is loaded, shown from its log ('replay').
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toMatch(/^(finished|replay)$/);
    await expect.poll(() => page.locator('[data-testid="run-answer"]').first().textContent()).toBe(HELPER_AGENT_ANSWER);
  }, 60_000);
});
