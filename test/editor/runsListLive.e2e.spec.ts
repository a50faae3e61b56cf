/**
 * The Runs list follows the runs started in the editor, in headless Chromium at 1280×720 against
 * the real `redflow serve`: a run is listed as soon as it is under way (no ↻), stays listed when it
 * ends, and a run the server refuses to start is listed as "not started" with its error, still
 * there after the error banner is gone.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';
import { holdTool } from './holdTool.js';

/** The echo flow, its tool swapped for the hold tool. */
function holdFlow() {
  const flow = echoFlow([
    { action: 'tool', tool: 'hold', input: {}, confidence: 0.5 },
    { action: 'final', message: 'Released.', confidence: 0.9 },
  ]);
  return {
    ...flow,
    nodes: flow.nodes.map((node) => (node.id === 'echo' ? { id: 'hold', type: 'tool.module', position: node.position, config: { module: 'tools/hold.mjs' } } : node)),
    edges: flow.edges.map((edge) => (edge.target === 'echo' ? { ...edge, target: 'hold' } : edge)),
  };
}

/** The echo flow with its tool module as a fresh palette node names it: a file not written yet. */
function missingToolFlow() {
  const flow = echoFlow([{ action: 'final', message: 'never', confidence: 0.9 }]);
  return { ...flow, nodes: flow.nodes.map((node) => (node.id === 'echo' ? { ...node, config: { module: 'tools/myTool.ts' } } : node)) };
}

let dir: string;
let holdFile: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let url: string;

async function openFlow(page: Page, id: string): Promise<void> {
  await page.goto(url);
  await page.waitForSelector(`[data-testid="flow-select"] option[value="${id}"]`, { state: 'attached' });
  await page.selectOption('[data-testid="flow-select"]', id);
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(id);
  await expect.poll(() => page.locator('[data-testid="canvas"] .react-flow__node').count()).toBe(3);
}

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, name);
  await page.screenshot({ path: file });
  console.log(`screenshot: ${file}`);
}

const rows = (page: Page) => page.locator('[data-testid="run-row"]');

describe.skipIf(SKIP_BROWSER)('the Runs list and runs started in the editor, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-runs-live-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    holdFile = path.join(dir, 'hold');
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    await writeFile(path.join(flowsDir, 'tools/hold.mjs'), holdTool(holdFile));
    await writeFile(path.join(flowsDir, 'held.json'), JSON.stringify(holdFlow()));
    await writeFile(path.join(flowsDir, 'missing-tool.json'), JSON.stringify(missingToolFlow()));
    url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('should list a run as soon as it is under way, and keep it listed when it ends', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await openFlow(page, 'held');
    await writeFile(holdFile, '');
    await page.fill('[data-testid="run-input"]', 'hold on');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(() => page.locator('[data-testid="node-hold"]').getAttribute('data-activity'), { timeout: 15_000 }).toBe('active');
    await expect.poll(() => rows(page).count(), { timeout: 5_000 }).toBe(1);
    const traceId = await rows(page).first().getAttribute('data-trace-id');
    await screenshot(page, 'runs-list-run-under-way-1280.png');
    await rm(holdFile);
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rows(page).first().getAttribute('data-trace-id')).toBe(traceId);
    await page.close();
  }, 60_000);

  it('should list a run the server refused to start as not started, with its error, after the banner is gone', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await openFlow(page, 'missing-tool');
    await page.fill('[data-testid="run-input"]', 'hi');
    await page.click('[data-testid="run-flow"]');
    const refused = page.locator('[data-testid="run-row-not-started"]');
    await refused.waitFor({ timeout: 15_000 });
    expect(await refused.textContent()).toContain('TOOL_MODULE_INVALID');
    // The error banner goes after 10 s; the list still says what happened.
    await page.locator('[data-testid="notice"]').waitFor({ state: 'detached', timeout: 15_000 });
    expect(await refused.isVisible()).toBe(true);
    expect(await refused.getAttribute('data-flow')).toBe('missing-tool');
    await screenshot(page, 'runs-list-run-not-started-1280.png');
    await page.close();
  }, 60_000);
});
