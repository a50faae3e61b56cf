/**
 * The step details of the Runtime tab, in headless Chromium at 1280×720 against the real
 * `redflow serve`: a clicked timeline row shows what the model was sent and answered, what the core
 * made of it, and the tool's input and output or error. A screenshot goes to artifacts/screenshots/.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

const screenshots = SCREENSHOTS;
const skip = SKIP_BROWSER;

/** A good tool call, a failing one, then the final answer. */
const ANSWERS = [
  { action: 'tool', tool: 'echo', input: { text: 'one' }, confidence: 0.4 },
  { action: 'tool', tool: 'echo', input: { text: 'fail' }, confidence: 0.3 },
  { action: 'final', message: 'Echoed once, then the tool failed.', confidence: 0.9 },
];

/** The run whose tool call was denied from the command line. */
const DENIED_TRACE = 'denied-run';

/** Long enough to be cut in the details until "show all". */
const LONG_INPUT = `echo please. ${'Where is my order? '.repeat(50)}`;

let dir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;

async function startServer(flowsDir: string, runsDir: string): Promise<string> {
  return startServe(flowsDir, runsDir, (child) => (server = child));
}

async function runFlowToEnd(id: string, input: string): Promise<void> {
  await page.selectOption('[data-testid="flow-select"]', id);
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(id);
  await page.fill('[data-testid="run-input"]', input);
  await page.click('[data-testid="run-flow"]');
  await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
  await page.click('[data-testid="tab-button-runtime"]');
}

const rows = () => page.locator('[data-testid="timeline-row"]');
const details = () => page.locator('[data-testid="step-details"]');
const text = (testId: string) => details().locator(`[data-testid="${testId}"]`).first().textContent();

describe.skipIf(skip)('the step details of the Runtime tab, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-steps-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    await writeFile(path.join(flowsDir, 'echo-agent.json'), JSON.stringify(echoFlow(ANSWERS)));
    await writeFile(path.join(flowsDir, 'broken-agent.json'), JSON.stringify(echoFlow(['not json'])));
    // One iteration allowed, spent on a good tool call: the run ends escalated, ITERATION_OVERFLOW.
    const limited = echoFlow([ANSWERS[0]]);
    const oneIteration = limited.nodes.map((node) => (node.id === 'agent' ? { ...node, config: { strategy: 'react', maxIterations: 1 } } : node));
    await writeFile(path.join(flowsDir, 'limited-agent.json'), JSON.stringify({ ...limited, nodes: oneIteration }));
    // A call that needs a person's approval, denied from the command line: its log in the server's runs.
    const guarded = echoFlow([ANSWERS[0], ANSWERS[2]]);
    const asking = guarded.nodes.map((node) => (node.id === 'agent' ? { ...node, config: { strategy: 'react', maxIterations: 5, requiresApproval: ['echo'] } } : node));
    const guardedFile = path.join(flowsDir, 'guarded-agent.json');
    await writeFile(guardedFile, JSON.stringify({ ...guarded, nodes: asking }));
    const log = path.join(dir, 'runs', `${DENIED_TRACE}.jsonl`);
    await mkdir(path.dirname(log), { recursive: true });
    const parked = await runCli(['run', guardedFile, '--input', 'may I?', '--trace-id', DENIED_TRACE, '--log', log], { cwd: dir });
    expect(parked.code, parked.stderr).toBe(3);
    const denied = await runCli(['deny', log, '--reason', 'not with this input', '--flow', guardedFile], { cwd: dir });
    expect(denied.code, denied.stderr).toBe(0);
    await mkdir(screenshots, { recursive: true });
    const url = await startServer(flowsDir, path.join(dir, 'runs'));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector('[data-testid="flow-select"] option[value="broken-agent"]', { state: 'attached' });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should show a tool step’s input and output, a failed step’s error code, and the final answer', async () => {
    await runFlowToEnd('echo-agent', LONG_INPUT);
    await expect.poll(() => rows().evaluateAll((all) => all.map((r) => r.getAttribute('data-action')))).toEqual(['tool', 'tool', 'final']);
    expect(await details().count()).toBe(0);

    // The good tool call: the run's input on top, the model's raw answer and verdict, the tool's input and output.
    await rows().nth(0).click();
    await expect.poll(() => details().getAttribute('data-iteration')).toBe('1');
    expect(await text('step-run-input')).toBe(`${LONG_INPUT.slice(0, 600)}…`);
    expect(await details().locator('[data-testid="step-messages"] li').first().textContent()).toContain('echo please.');
    expect(JSON.parse((await text('step-model-answer')) ?? '')).toMatchObject({ action: 'tool', tool: 'echo', input: { text: 'one' } });
    expect(await details().locator('[data-testid="step-verdict"]').getAttribute('data-verdict')).toBe('tool');
    expect(JSON.parse((await text('step-tool-input')) ?? '')).toEqual({ text: 'one' });
    expect(JSON.parse((await text('step-tool-output')) ?? '')).toEqual({ echoed: 'one' });
    expect(await details().locator('[data-testid="step-tool-error"]').count()).toBe(0);
    expect(await details().getAttribute('data-failed')).toBeNull();

    // The run's long input is cut until "show all"; the system prompt is folded.
    await details().locator('[data-testid="show-all"]').first().click();
    expect(await text('step-run-input')).toBe(LONG_INPUT);
    const system = details().locator('details.step__system');
    expect(await system.getAttribute('open')).toBeNull();
    expect(await system.locator('[data-testid="step-system-prompt"]').isVisible()).toBe(false);
    await system.locator('summary').click();
    expect(await system.locator('[data-testid="step-system-prompt"]').textContent()).toContain('You are an execution agent.');

    // The failed tool call: ✖ and its code, the tool's input, no output.
    await rows().nth(1).click();
    await expect.poll(() => details().getAttribute('data-iteration')).toBe('2');
    expect(await details().getAttribute('data-failed')).toBe('true');
    expect(await details().locator('.step__head').textContent()).toContain('✖ TOOL_FAILED');
    expect(await details().locator('[data-testid="step-tool-error"]').getAttribute('data-code')).toBe('TOOL_FAILED');
    expect(JSON.parse((await text('step-tool-input')) ?? '')).toEqual({ text: 'fail' });
    expect(await details().locator('[data-testid="step-tool-output"]').count()).toBe(0);
    // What the model was sent this time carries the first call's result.
    expect(await details().locator('[data-testid="step-messages"]').textContent()).toContain('echoed');

    // The final step: its verdict and the run's answer.
    await rows().nth(2).click();
    await expect.poll(() => details().getAttribute('data-iteration')).toBe('3');
    expect(await details().locator('[data-testid="step-verdict"]').getAttribute('data-verdict')).toBe('final');
    expect(await text('step-answer')).toBe('Echoed once, then the tool failed.');
    expect(await details().locator('[data-testid="step-tool-input"]').count()).toBe(0);

    await rows().nth(1).click();
    await details().locator('[data-testid="step-tool-error"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(screenshots, 'step-details.png') });
    await page.click('[data-testid="step-details-close"]');
    expect(await details().count()).toBe(0);
  });

  it('should show a clicked node’s last call in the run: the tool’s input and result, the model’s messages and raw answer', async () => {
    await runFlowToEnd('echo-agent', 'echo twice');
    const nodeStep = page.locator('[data-testid="node-last-step"]');

    // The tool node: its last call, the one that failed.
    await page.click('[data-testid="node-echo"]');
    await expect.poll(() => nodeStep.getAttribute('data-iteration')).toBe('2');
    expect(await details().getAttribute('data-part')).toBe('tool');
    expect(await details().locator('.step__head').textContent()).toContain('✖ TOOL_FAILED');
    expect(JSON.parse((await text('step-tool-input')) ?? '')).toEqual({ text: 'fail' });
    expect(await details().locator('[data-testid="step-tool-error"]').getAttribute('data-code')).toBe('TOOL_FAILED');
    // Its config is still there, under it.
    expect(await page.locator('[data-testid="node-config"][data-node-id="echo"]').count()).toBe(1);

    // The model node: its last call, the final answer, with the messages it was sent.
    await page.click('[data-testid="node-llm"]');
    await expect.poll(() => nodeStep.getAttribute('data-iteration')).toBe('3');
    expect(await details().getAttribute('data-part')).toBe('model');
    expect(JSON.parse((await text('step-model-answer')) ?? '')).toMatchObject({ action: 'final', message: 'Echoed once, then the tool failed.' });
    expect(await details().locator('[data-testid="step-verdict"]').getAttribute('data-verdict')).toBe('final');
    expect(await details().locator('[data-testid="step-messages"]').textContent()).toContain('asked to fail');
    expect(await details().locator('[data-testid="step-tool-input"]').count()).toBe(0);

    // Scrubbed back to the first call's result: that is the tool's last call there.
    await page.locator('[data-testid="scrubber"]').fill('4');
    await page.click('[data-testid="node-echo"]');
    await expect.poll(() => nodeStep.getAttribute('data-iteration')).toBe('1');
    expect(JSON.parse((await text('step-tool-output')) ?? '')).toEqual({ echoed: 'one' });
    await page.screenshot({ path: path.join(screenshots, 'node-last-call.png') });
  });

  it('should mark the row and the step in which the run ended with its code, after a good tool call', async () => {
    await runFlowToEnd('limited-agent', 'one step only');
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().getAttribute('data-failed')).toBe('true');
    expect(await rows().first().locator('.timeline__code').textContent()).toBe('✖ ITERATION_OVERFLOW');
    await rows().first().click();
    await expect.poll(() => details().getAttribute('data-failed')).toBe('true');
    expect(JSON.parse((await text('step-tool-output')) ?? '')).toEqual({ echoed: 'one' });
    expect(await details().locator('[data-testid="step-failure"]').getAttribute('data-code')).toBe('ITERATION_OVERFLOW');
  });

  it('should show a person’s denial of a tool call, with the reason, and the error the model was given', async () => {
    await page.check('[data-testid="runs-all"]');
    const row = page.locator(`[data-testid="run-row"][data-trace-id="${DENIED_TRACE}"]`);
    await expect.poll(() => row.count()).toBe(1);
    await row.click();
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('replay');
    await page.click('[data-testid="tab-button-runtime"]');
    await rows().first().click();
    await expect.poll(() => details().getAttribute('data-iteration')).toBe('1');
    expect(await details().locator('[data-testid="step-tool-approval"]').getAttribute('data-decision')).toBe('denied');
    expect(await text('step-tool-approval')).toBe('denied: not with this input');
    expect(await details().locator('[data-testid="step-tool-error"]').getAttribute('data-code')).toBe('TOOL_DENIED');
    await page.uncheck('[data-testid="runs-all"]');
  });

  it('should show a rejected answer’s verdict and error code', async () => {
    await runFlowToEnd('broken-agent', 'this one fails');
    await expect.poll(() => rows().count()).toBe(1);
    await rows().first().click();
    await expect.poll(() => details().getAttribute('data-failed')).toBe('true');
    expect(await text('step-model-answer')).toBe('not json');
    expect(await details().locator('[data-testid="step-verdict"]').textContent()).toBe('✖ rejected · INVALID_JSON');
    expect(await details().locator('[data-testid="step-failure"]').getAttribute('data-code')).toBe('INVALID_JSON');
  });
});
