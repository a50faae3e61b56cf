/**
 * The Runtime / Debug tab as a debugger of a model that reports its tokens, in headless Chromium at
 * 1280×720 against the real `redflow serve`, the model a local Chat Completions server (the real
 * streamed protocol, with its usage chunk): with debug on a step shows the answer's thought, with
 * debug off it says the thought was kept out of the log; each model call's tokens are on its step;
 * and the step under way is marked on its row, a model call being waited for with a row of its own
 * whose details show what the model was sent. Screenshots go to artifacts/screenshots/.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';
import { ECHO_TOOL } from './echoFlow.js';
import { holdTool } from './holdTool.js';

/** The answer calling `echo`, with a thought, and the final answer, with one. */
const TOOL_CALL = { action: 'tool', tool: 'echo', input: { text: 'hi' }, confidence: 0.6, thought: 'Echo it first, then answer.' };
const FINAL = { action: 'final', message: 'Echoed.', confidence: 0.9, thought: 'The echo came back: done.' };
/** The tokens the server reports for each of the two calls. */
const USAGE = [
  { prompt_tokens: 123, completion_tokens: 17, total_tokens: 140 },
  { prompt_tokens: 201, completion_tokens: 9, total_tokens: 210 },
];

/** A flow whose model is the server at `baseUrl`, with the tools `echo` and `hold`; `debug` on or off; `approval`: echo's calls need one. */
function debugFlow(baseUrl: string, debug: boolean, approval = false) {
  return {
    name: debug ? 'Debug on' : 'Debug off',
    nodes: [
      { id: 'agent', type: 'agent.core', position: { x: 0, y: 0 }, config: { strategy: 'react', maxIterations: 5, debug, ...(approval && { requiresApproval: ['echo'] }) } },
      { id: 'llm', type: 'model.llm', position: { x: 0, y: -170 }, config: { provider: 'openai-compatible', model: 'test-model', baseUrl, maxRetries: 0 } },
      { id: 'echo', type: 'tool.module', position: { x: -150, y: 170 }, config: { module: 'tools/echo.mjs' } },
      { id: 'hold', type: 'tool.module', position: { x: 150, y: 170 }, config: { module: 'tools/hold.mjs' } },
    ],
    edges: [
      { id: 'e1', source: 'agent', target: 'llm' },
      { id: 'e2', source: 'agent', target: 'echo' },
      { id: 'e3', source: 'agent', target: 'hold' },
    ],
  };
}

let dir: string;
let holdFile: string;
let model: FakeChatServer;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;

const rows = () => page.locator('[data-testid="timeline-row"]');
const details = () => page.locator('[data-testid="step-details"]');
const inDetails = (testId: string) => details().locator(`[data-testid="${testId}"]`);
const runState = () => page.getAttribute('[data-testid="editor"]', 'data-run-state');

async function startRun(flow: string, input: string): Promise<void> {
  await page.selectOption('[data-testid="flow-select"]', flow);
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(flow);
  await page.fill('[data-testid="run-input"]', input);
  await page.click('[data-testid="run-flow"]');
  await page.click('[data-testid="node-agent"]');
  await page.click('[data-testid="tab-button-runtime"]');
}

/** Opens the details of the timeline's row `index` (iteration `index + 1`). */
async function openRow(index: number): Promise<void> {
  await rows().nth(index).click();
  await expect.poll(() => details().getAttribute('data-iteration')).toBe(String(index + 1));
}

describe.skipIf(SKIP_BROWSER)('the Runtime / Debug tab: thoughts, tokens and the step under way, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-debug-tab-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    holdFile = path.join(dir, 'hold');
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    await writeFile(path.join(flowsDir, 'tools/hold.mjs'), holdTool(holdFile));
    model = await startFakeChatCompletionsServer();
    model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
    await writeFile(path.join(flowsDir, 'debug-on.json'), JSON.stringify(debugFlow(model.baseUrl, true)));
    await writeFile(path.join(flowsDir, 'debug-off.json'), JSON.stringify(debugFlow(model.baseUrl, false)));
    await writeFile(path.join(flowsDir, 'guarded.json'), JSON.stringify(debugFlow(model.baseUrl, false, true)));
    await mkdir(SCREENSHOTS, { recursive: true });
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector('[data-testid="flow-select"] option[value="debug-off"]', { state: 'attached' });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    await model?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should show each answer’s thought with debug on, and each model call’s tokens', async () => {
    model.enqueue({ kind: 'completion', content: JSON.stringify(TOOL_CALL), usage: USAGE[0] }, { kind: 'completion', content: JSON.stringify(FINAL), usage: USAGE[1] });
    await startRun('debug-on', 'echo hi, thinking aloud');
    await expect.poll(runState, { timeout: 15_000 }).toBe('finished');
    await expect.poll(() => rows().evaluateAll((all) => all.map((row) => row.getAttribute('data-action')))).toEqual(['tool', 'final']);

    // The run's tokens, all calls together, by the run's facts.
    expect(await page.textContent('[data-testid="run-tokens"]')).toBe('324 in / 26 out (350)');
    await openRow(0);
    expect(await inDetails('step-thought').textContent()).toBe(TOOL_CALL.thought);
    expect(await inDetails('step-thought-hidden').count()).toBe(0);
    expect(await inDetails('step-usage').textContent()).toContain('tokens 123 in / 17 out / 140 total');
    await inDetails('step-thought').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'step-thought.png') });

    await openRow(1);
    expect(await inDetails('step-thought').textContent()).toBe(FINAL.thought);
    expect(await inDetails('step-usage').textContent()).toContain('tokens 201 in / 9 out / 210 total');
  }, 30_000);

  it('should say the thought was kept out of the log with debug off, and show none', async () => {
    model.enqueue({ kind: 'completion', content: JSON.stringify(TOOL_CALL), usage: USAGE[0] }, { kind: 'completion', content: JSON.stringify(FINAL), usage: USAGE[1] });
    await startRun('debug-off', 'echo hi, thinking quietly');
    await expect.poll(runState, { timeout: 15_000 }).toBe('finished');
    await expect.poll(() => rows().count()).toBe(2);
    for (const index of [0, 1]) {
      await openRow(index);
      expect(await inDetails('step-thought').count()).toBe(0);
      expect(await inDetails('step-thought-hidden').count()).toBe(1);
      expect(await inDetails('step-model-answer').textContent()).not.toContain('Echo it first');
      expect(await inDetails('step-usage').textContent()).toContain(`tokens ${USAGE[index]?.prompt_tokens} in`);
    }
  }, 30_000);

  it('should mark the step under way: a model call waited for with a row of its own, then a running tool', async () => {
    await writeFile(holdFile, '');
    const holdCall = { action: 'tool', tool: 'hold', input: {}, confidence: 0.5 };
    model.enqueue(
      { kind: 'delay', ms: 2500, then: { kind: 'completion', content: JSON.stringify(holdCall) } },
      { kind: 'completion', content: JSON.stringify({ action: 'final', message: 'Released.', confidence: 0.9 }) },
    );
    await startRun('debug-on', 'hold on a moment');

    // The model is asked: one row, under way, whose details are what the model was sent.
    await expect.poll(() => rows().getAttribute('data-in-progress'), { timeout: 10_000, interval: 50 }).toBe('model');
    expect(await rows().count()).toBe(1);
    expect(await rows().locator('[data-testid="timeline-in-progress"]').textContent()).toBe('waiting for the model…');
    await openRow(0);
    expect(await inDetails('step-messages').textContent()).toContain('hold on a moment');
    expect(await inDetails('step-model-pending').textContent()).toBe('Waiting for the model’s answer…');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'step-in-progress.png') });

    // It answers with a call of hold, which runs until the test lets it go: the same row, now the tool under way.
    await expect.poll(() => rows().getAttribute('data-in-progress'), { timeout: 10_000 }).toBe('tool');
    expect(await rows().count()).toBe(1);
    expect(await rows().getAttribute('data-action')).toBe('tool');
    expect(await rows().locator('[data-testid="timeline-in-progress"]').textContent()).toBe('running…');
    await expect.poll(() => inDetails('step-tool-input').count()).toBe(1);
    expect(await details().textContent()).toContain('running…');

    // Let go: the run ends, and no row is under way any more.
    await rm(holdFile);
    await expect.poll(runState, { timeout: 15_000 }).toBe('finished');
    await expect.poll(() => rows().evaluateAll((all) => all.map((row) => [row.getAttribute('data-action'), row.getAttribute('data-in-progress')]))).toEqual([
      ['tool', null],
      ['final', null],
    ]);
    expect(await page.locator('[data-testid="timeline-in-progress"]').count()).toBe(0);
  }, 60_000);

  it('should mark a call waiting for an approval as waiting, and the row with the abort’s code once aborted', async () => {
    model.enqueue({ kind: 'completion', content: JSON.stringify({ action: 'tool', tool: 'echo', input: { text: 'hi' }, confidence: 0.6 }) });
    await startRun('guarded', 'echo, once approved');
    await expect.poll(() => rows().getAttribute('data-in-progress'), { timeout: 10_000 }).toBe('waiting');
    expect(await rows().locator('[data-testid="timeline-in-progress"]').textContent()).toBe('waiting…');
    await page.click('[data-testid="abort-run"]');
    await expect.poll(runState, { timeout: 15_000 }).toBe('finished');
    await expect.poll(() => rows().getAttribute('data-failed')).toBe('true');
    expect(await rows().getAttribute('data-in-progress')).toBeNull();
    expect(await rows().locator('.timeline__code').textContent()).toBe('✖ RUN_ABORTED');
  }, 30_000);
});
