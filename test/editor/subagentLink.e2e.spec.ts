/**
 * A subagent's call in the editor's step details, in headless Chromium against the real `redflow
 * serve`: the call names the run it started, and a click opens that run, its own timeline.
 */
import type { ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

let dir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;

const rows = () => page.locator('[data-testid="timeline-row"]');
const details = () => page.locator('[data-testid="step-details"]');

describe.skipIf(SKIP_BROWSER)('a subagent call in the step details, in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-subagent-link-'));
    const flowsDir = path.join(dir, 'flows');
    const fixtures = path.join(ROOT, 'test/fixtures/subagents');
    await mkdir(path.join(flowsDir, 'counter'), { recursive: true });
    await copyFile(path.join(fixtures, 'parent.json'), path.join(flowsDir, 'parent.json'));
    await copyFile(path.join(fixtures, 'counter/flow.json'), path.join(flowsDir, 'counter/flow.json'));
    await copyFile(path.join(fixtures, 'counter/bump.mjs'), path.join(flowsDir, 'counter/bump.mjs'));
    // The counter's tool writes here; the server's process (and so its subagent runs) inherits it.
    process.env.COUNTER_FILE = path.join(dir, 'count');
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector('[data-testid="flow-select"] option[value="parent"]', { state: 'attached' });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should name the run a subagent call started, and open it on a click', async () => {
    await page.selectOption('[data-testid="flow-select"]', 'parent');
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('parent');
    await page.fill('[data-testid="run-input"]', 'go');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
    await page.click('[data-testid="tab-button-runtime"]');
    await expect.poll(() => rows().evaluateAll((all) => all.map((row) => row.getAttribute('data-action')))).toEqual(['tool', 'tool', 'final']);

    // The delegation of iteration 2 was a call of the subagent: its run is named, and linked.
    await rows().nth(1).click();
    const link = details().locator('[data-testid="step-tool-subagent"]');
    const childTraceId = await link.getAttribute('data-trace-id');
    expect(childTraceId).toMatch(/-2$/);
    expect(await link.textContent()).toContain(childTraceId);
    await link.locator('button').click();

    // The subagent's own run, with its own timeline: two calls of its tool, then its answer.
    await expect.poll(() => page.locator('[data-testid="tab-runtime"] code.trace-id').textContent(), { timeout: 10_000 }).toBe(childTraceId);
    await expect.poll(() => rows().evaluateAll((all) => all.map((row) => row.getAttribute('data-action')))).toEqual(['tool', 'tool', 'final']);
    await expect.poll(() => page.locator('[data-testid="run-answer"]').textContent()).toContain('counted to two');
    // A plain tool's call names no run.
    await rows().nth(0).click();
    expect(await details().locator('[data-testid="step-tool-subagent"]').count()).toBe(0);
  });
});
