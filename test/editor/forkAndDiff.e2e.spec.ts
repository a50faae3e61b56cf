/**
 * Forking a run from the editor, in headless Chromium against the real `redflow serve`: "Fork here"
 * at the scrubber's iteration starts the fork and opens it, the fork names its parent and fork
 * point, and "Diff with parent" shows the two runs iteration by iteration, the first difference marked.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

const FLOW = 'fork-demo';
const echo = (text: string) => ({ action: 'tool', tool: 'echo', input: { text }, confidence: 0.5 });
const final = (message: string) => ({ action: 'final', message, confidence: 0.9 });

let dir: string;
let flowsDir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;

const runState = () => page.getAttribute('[data-testid="editor"]', 'data-run-state');
const shownTraceId = () => page.locator('[data-testid="run-state"] .trace-id').textContent();

describe.skipIf(SKIP_BROWSER)('forking a run in the editor, in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-fork-editor-'));
    flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    await writeFile(path.join(flowsDir, `${FLOW}.json`), JSON.stringify(echoFlow([echo('one'), echo('two'), final('parent done')], 'Fork demo')));
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector(`[data-testid="flow-select"] option[value="${FLOW}"]`, { state: 'attached' });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should fork a finished run at iteration 2, open the fork with its lineage, and show its diff with the parent', async () => {
    await page.selectOption('[data-testid="flow-select"]', FLOW);
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(FLOW);
    await page.fill('[data-testid="run-input"]', 'go');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(runState, { timeout: 15_000 }).toBe('finished');
    await page.click('[data-testid="tab-button-runtime"]');
    const parent = await shownTraceId();
    expect(parent).toBeTruthy();
    // A run that is no fork has no lineage.
    expect(await page.locator('[data-testid="fork-lineage"]').count()).toBe(0);

    // The served flow's scripted model now answers at once in iteration 2: the fork goes another way from there.
    await writeFile(path.join(flowsDir, `${FLOW}.json`), JSON.stringify(echoFlow([echo('one'), final('fork done')], 'Fork demo')));

    // Back along the scrubber to an event of iteration 2, and fork there.
    const forkHere = page.locator('[data-testid="fork-here"]');
    for (let i = 0; i < 30 && !(await forkHere.textContent())?.includes('#2'); i++) await page.click('[data-testid="scrub-prev"]');
    expect(await forkHere.textContent()).toContain('#2');
    await forkHere.click();

    // The fork is opened: another trace id, finished, named a fork of the parent at #2.
    await expect.poll(shownTraceId, { timeout: 15_000 }).not.toBe(parent);
    // A run opened after it ended is shown as a replay of its log.
    await expect.poll(async () => ['finished', 'replay'].includes((await runState()) ?? ''), { timeout: 15_000 }).toBe(true);
    const lineage = page.locator('[data-testid="fork-lineage"]');
    await expect.poll(() => lineage.textContent()).toBe(`forked from ${parent} at #2`);
    await expect.poll(() => page.locator('[data-testid="run-answer"]').textContent(), { timeout: 15_000 }).toContain('fork done');
    const fork = await shownTraceId();
    await expect.poll(() => page.locator(`[data-testid="run-row"][data-trace-id="${fork}"]`).count()).toBe(1);

    await page.click('[data-testid="diff-with-parent"]');
    const rows = page.locator('[data-testid="diff-row"]');
    await expect.poll(() => rows.evaluateAll((all) => all.map((row) => [row.getAttribute('data-iteration'), row.getAttribute('data-first')]))).toEqual([
      ['1', null],
      ['2', 'true'],
      ['3', null],
    ]);
    expect(await rows.nth(0).locator('td').last().textContent()).toBe('same');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'fork-diff.png') });

    // The lineage's link opens the parent.
    await page.click('[data-testid="fork-parent"]');
    await expect.poll(shownTraceId, { timeout: 10_000 }).toBe(parent);
  }, 60_000);
});
