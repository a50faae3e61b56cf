/**
 * Switching flows in the editor, in headless Chromium at 1280×720 against the real `redflow serve`:
 * the run view follows the open flow (opening another flow, or New, clears the previous flow's
 * run, timeline, statechart and node marks; the Runs list shows the new flow's runs), and the
 * flow picker lists flows added on disk by someone else without a reload.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';
import { holdTool } from './holdTool.js';

/** A failing tool call, then the final answer: the run leaves a ✖ on the echo node. */
const ANSWERS = [
  { action: 'tool', tool: 'echo', input: { text: 'fail' }, confidence: 0.3 },
  { action: 'final', message: 'The tool failed.', confidence: 0.9 },
];

/** The echo flow, its tool swapped for the hold tool. */
function holdFlow() {
  const flow = echoFlow([
    { action: 'tool', tool: 'hold', input: {}, confidence: 0.5 },
    { action: 'final', message: 'Released.', confidence: 0.9 },
  ]);
  return { ...flow, nodes: flow.nodes.map((node) => (node.id === 'echo' ? { id: 'hold', type: 'tool.module', position: node.position, config: { module: 'tools/hold.mjs' } } : node)), edges: flow.edges.map((edge) => (edge.target === 'echo' ? { ...edge, target: 'hold' } : edge)) };
}

let dir: string;
let holdFile: string;
let flowsDir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;

async function openFlow(id: string): Promise<void> {
  await page.waitForSelector(`[data-testid="flow-select"] option[value="${id}"]`, { state: 'attached' });
  await page.selectOption('[data-testid="flow-select"]', id);
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(id);
  await expect.poll(() => page.locator('[data-testid="canvas"] .react-flow__node').count()).toBe(3);
}

async function runToEnd(input: string): Promise<void> {
  await page.fill('[data-testid="run-input"]', input);
  await page.click('[data-testid="run-flow"]');
  await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
}

/** Everything the editor shows of a viewed run, to compare before and after switching flows. */
async function runTraces() {
  // The agent's Runtime tab holds the timeline (a new flow has no agent, so no tab).
  const runtimeTab = page.locator('[data-testid="tab-button-runtime"]');
  if ((await runtimeTab.count()) > 0) await runtimeTab.click();
  return {
    state: await page.getAttribute('[data-testid="editor"]', 'data-run-state'),
    timelineRows: await page.locator('[data-testid="timeline-row"]').count(),
    statechart: await page.getAttribute('[data-testid="statechart"]', 'data-current-state'),
    scrubber: await page.locator('[data-testid="scrubber-bar"]').count(),
    markedNodes: await page.locator('[data-testid^="node-"][data-node-type]').evaluateAll((nodes) =>
      nodes.filter((node) => node.getAttribute('data-activity') !== '' || node.getAttribute('data-failed-code') !== '').map((node) => node.getAttribute('data-testid')),
    ),
    inspector: await page.isEnabled('[data-testid="open-inspector"]'),
  };
}

const NO_RUN = { state: 'idle', timelineRows: 0, statechart: '', scrubber: 0, markedNodes: [], inspector: false };
const options = () => page.locator('[data-testid="flow-select"] option').evaluateAll((all) => all.map((o) => o.getAttribute('value')));
const rowFlows = () => page.locator('[data-testid="run-row"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-flow')));

describe.skipIf(SKIP_BROWSER)('switching flows in the editor, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-switching-'));
    flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    // Two flows with the same node ids: a run of one drawn over the other would mark its nodes.
    await writeFile(path.join(flowsDir, 'first-agent.json'), JSON.stringify(echoFlow(ANSWERS, 'First')));
    await writeFile(path.join(flowsDir, 'second-agent.json'), JSON.stringify(echoFlow(ANSWERS, 'Second')));
    holdFile = path.join(dir, 'hold');
    await writeFile(path.join(flowsDir, 'tools/hold.mjs'), holdTool(holdFile));
    await writeFile(path.join(flowsDir, 'held-agent.json'), JSON.stringify(holdFlow()));
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("should clear the previous flow's run when another flow is opened, and list that flow's runs", { timeout: 60_000 }, async () => {
    await openFlow('first-agent');
    await runToEnd('first run');
    const shown = await runTraces();
    expect(shown).toMatchObject({ state: 'finished', timelineRows: 2, statechart: 'done', scrubber: 1, inspector: true });
    expect(shown.markedNodes).toContain('node-echo');

    await openFlow('second-agent');
    await expect.poll(runTraces).toEqual(NO_RUN);
    await expect.poll(rowFlows).toEqual([]);

    // The first flow's run is still there, in its own list, and opens over its own graph.
    await openFlow('first-agent');
    await expect.poll(rowFlows).toEqual(['first-agent']);
    await page.locator('[data-testid="run-row"]').first().click();
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('replay');
    expect(await page.inputValue('[data-testid="flow-id"]')).toBe('first-agent');
    await expect.poll(async () => (await runTraces()).timelineRows).toBe(2);
  });

  it("should clear the run on New, and keep a run opened from the all-flows list over its own flow's graph", { timeout: 60_000 }, async () => {
    await openFlow('first-agent');
    await runToEnd('another run');
    await page.click('[data-testid="new-flow"]');
    await expect.poll(runTraces).toEqual(NO_RUN);

    // Opening a run of another flow from the list opens that flow with it: the run stays.
    await page.check('[data-testid="runs-all"]');
    const row = page.locator('[data-testid="run-row"][data-flow="first-agent"]').first();
    await row.click();
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('first-agent');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('replay');
    await expect.poll(async () => (await runTraces()).timelineRows).toBe(2);
    await page.uncheck('[data-testid="runs-all"]');
  });

  it('should leave a run under way going on when another flow is opened, and follow it live when it is opened again', { timeout: 60_000 }, async () => {
    await writeFile(holdFile, '');
    await page.selectOption('[data-testid="flow-select"]', 'held-agent');
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('held-agent');
    await page.fill('[data-testid="run-input"]', 'wait for it');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(() => page.locator('[data-testid="node-hold"]').getAttribute('data-activity'), { timeout: 15_000 }).toBe('active');

    await openFlow('first-agent');
    await expect.poll(runTraces).toEqual(NO_RUN);
    expect(await page.textContent('[data-testid="notice"]')).toContain('goes on');

    // Back on its flow, the run is listed as running; opened, it is followed until it ends.
    await page.selectOption('[data-testid="flow-select"]', 'held-agent');
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('held-agent');
    const row = page.locator('[data-testid="run-row"]').first();
    await expect.poll(() => row.locator('.chip').textContent()).toBe('running');
    await row.click();
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('streaming');
    expect(await page.isEnabled('[data-testid="abort-run"]')).toBe(true);
    await rm(holdFile);
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
    await page.click('[data-testid="tab-button-runtime"]');
    await expect.poll(() => page.locator('[data-testid="timeline-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')))).toEqual(['tool', 'final']);
    expect(await page.textContent('[data-testid="run-answer"]')).toBe('Released.');
  });

  it('should list a flow added on disk when the flow picker is opened, without a reload', async () => {
    expect(await options()).not.toContain('added-later');
    await writeFile(path.join(flowsDir, 'added-later.json'), JSON.stringify(echoFlow(ANSWERS, 'Added later')));
    await page.click('[data-testid="flow-select"]');
    await page.keyboard.press('Escape');
    await expect.poll(options, { timeout: 5_000 }).toContain('added-later');
    await openFlow('added-later');
  });
});
