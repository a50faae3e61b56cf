/**
 * The editor as a debugger, in headless Chromium at 1280×720 against the real `redflow serve`: the
 * Errors tab before and after a run, the runs list kept to the open flow (with a toggle for all
 * runs, and each blocked run's error code), and unsaved changes (a dirty marker, a confirmation
 * before they are discarded, the id and name fields wide enough). Screenshots go to
 * artifacts/screenshots/.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Dialog, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

const screenshots = SCREENSHOTS;
const skip = SKIP_BROWSER;

/** A flow id and name of ordinary length, which the toolbar must show whole at 1280×720. */
const GOOD_FLOW = 'order-status-agent';
const GOOD_NAME = 'Order status agent';
/** Its model answers something that is not JSON: the run is blocked with INVALID_JSON. */
const BAD_FLOW = 'broken-agent';

let dir: string;
let server: ChildProcess | undefined;
let url: string;
let browser: FileBrowser;
let page: Page;

async function startServer(flowsDir: string, runsDir: string): Promise<string> {
  return startServe(flowsDir, runsDir, (child) => (server = child));
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(screenshots, `${name}.png`) });
}

async function openFlow(id: string): Promise<void> {
  await page.selectOption('[data-testid="flow-select"]', id);
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(id);
  await expect.poll(() => page.locator('[data-testid="canvas"] .react-flow__node').count()).toBe(3);
}

async function runToEnd(input: string): Promise<void> {
  await page.fill('[data-testid="run-input"]', input);
  await page.click('[data-testid="run-flow"]');
  await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
}

const marks = () => page.locator('[data-testid^="watched-"] .watched__mark').allTextContents();
const rowFlows = () => page.locator('[data-testid="run-row"]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-flow')));

/** Answers the next dialog (`accept` or not) and resolves with it; rejects when none comes within 5 s. */
function nextDialog(accept: boolean): Promise<Dialog> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      page.off('dialog', answer);
      reject(new Error('no dialog was shown'));
    }, 5_000);
    const answer = (dialog: Dialog) => {
      clearTimeout(timer);
      void (accept ? dialog.accept() : dialog.dismiss()).then(() => resolve(dialog));
    };
    page.once('dialog', answer);
  });
}

describe.skipIf(skip)('the editor as a debugger, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-debugger-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    await writeFile(path.join(flowsDir, `${GOOD_FLOW}.json`), JSON.stringify(echoFlow([{ action: 'final', message: 'Shipped.', confidence: 0.9 }], GOOD_NAME)));
    await writeFile(path.join(flowsDir, `${BAD_FLOW}.json`), JSON.stringify(echoFlow(['not json'], 'Broken agent')));
    await mkdir(screenshots, { recursive: true });
    url = await startServer(flowsDir, path.join(dir, 'runs'));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector(`[data-testid="flow-select"] option[value="${BAD_FLOW}"]`, { state: 'attached' });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should show the Errors tab neutral before any run, then what the run recorded', async () => {
    await openFlow(GOOD_FLOW);
    await page.click('[data-testid="tab-button-errors"]');
    await page.waitForSelector('[data-testid="tab-errors"]');
    // No run seen: nothing is claimed clear, nothing seen.
    expect(await marks()).toEqual(['–', '–', '–']);
    expect(await page.locator('[data-testid^="watched-"].is-clear, [data-testid^="watched-"].is-seen').count()).toBe(0);
    expect(await page.textContent('[data-testid="tab-errors"]')).toContain('No run yet.');
    await shot('errors-before-run');

    await runToEnd('where is my order?');
    await page.click('[data-testid="tab-button-errors"]');
    await expect.poll(marks).toEqual(['✓', '✓', '✓']);
    expect(await page.locator('[data-testid^="watched-"].is-clear').count()).toBe(3);
    expect(await page.textContent('[data-testid="tab-errors"]')).toContain('No errors in this run.');

    await openFlow(BAD_FLOW);
    await runToEnd('this one fails');
    await page.click('[data-testid="tab-button-errors"]');
    await expect.poll(() => page.getAttribute('[data-testid="watched-INVALID_JSON"]', 'class')).toContain('is-seen');
    expect(await page.locator('[data-testid="watched-INVALID_JSON"] .watched__mark').textContent()).toBe('✖');
  });

  it('should list only the open flow’s runs, all runs on the toggle, and the error code of a blocked run', async () => {
    // The broken flow is open: only its run, blocked, with its code on the row.
    await page.click('[data-testid="runs-refresh"]');
    await expect.poll(rowFlows).toEqual([BAD_FLOW]);
    const row = page.locator('[data-testid="run-row"]').first();
    expect(await row.locator('[data-testid="run-row-code"]').textContent()).toBe('INVALID_JSON');
    // The Runs list scrolls on its own, under the palette.
    await page.locator('[data-testid="runs-list"]').scrollIntoViewIfNeeded();
    await shot('runs-of-flow');

    await page.click('[data-testid="runs-all"]');
    await expect.poll(rowFlows).toEqual([BAD_FLOW, GOOD_FLOW]);
    // The finished run that was not blocked has no code.
    expect(await page.locator(`[data-testid="run-row"][data-flow="${GOOD_FLOW}"] [data-testid="run-row-code"]`).count()).toBe(0);
    await page.locator('[data-testid="runs-list"]').scrollIntoViewIfNeeded();
    await shot('runs-all');

    await page.click('[data-testid="runs-all"]');
    await expect.poll(rowFlows).toEqual([BAD_FLOW]);
    await openFlow(GOOD_FLOW);
    await expect.poll(rowFlows).toEqual([GOOD_FLOW]);
  });

  it('should show the id and name of an open flow whole in the toolbar at 1280×720', async () => {
    await openFlow(GOOD_FLOW);
    expect(await page.inputValue('[data-testid="flow-name"]')).toBe(GOOD_NAME);
    for (const field of ['flow-id', 'flow-name']) {
      const fits = await page.locator(`[data-testid="${field}"]`).evaluate((input) => input.scrollWidth <= input.clientWidth);
      expect(fits, `${field} is cut off`).toBe(true);
    }
  });

  it('should mark unsaved changes and confirm before discarding them', async () => {
    await openFlow(GOOD_FLOW);
    expect(await page.locator('[data-testid="dirty-marker"]').count()).toBe(0);
    expect(await page.getAttribute('[data-testid="save-flow"]', 'data-dirty')).toBe('false');

    await page.fill('[data-testid="flow-name"]', 'Order status agent v2');
    await expect.poll(() => page.locator('[data-testid="dirty-marker"]').count()).toBe(1);
    expect(await page.getAttribute('[data-testid="save-flow"]', 'data-dirty')).toBe('true');
    await shot('unsaved-changes');

    // Opening another flow asks first; cancelled, the edit stays.
    const refused = nextDialog(false);
    await page.selectOption('[data-testid="flow-select"]', BAD_FLOW);
    expect((await refused).type()).toBe('confirm');
    expect(await page.inputValue('[data-testid="flow-id"]')).toBe(GOOD_FLOW);
    expect(await page.inputValue('[data-testid="flow-name"]')).toBe('Order status agent v2');
    expect(await page.inputValue('[data-testid="flow-select"]')).toBe(GOOD_FLOW);

    // Reloading asks too (beforeunload); cancelled, the page and the edit stay.
    const unload = nextDialog(false);
    await page.reload({ timeout: 3_000 }).catch(() => undefined);
    expect((await unload).type()).toBe('beforeunload');
    expect(await page.inputValue('[data-testid="flow-name"]')).toBe('Order status agent v2');

    // New asks; accepted, it starts over with the new flow's own id and name.
    const accepted = nextDialog(true);
    await page.click('[data-testid="new-flow"]');
    expect((await accepted).type()).toBe('confirm');
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('my-flow');
    expect(await page.inputValue('[data-testid="flow-name"]')).toBe('my-flow');
    expect(await page.locator('[data-testid="canvas"] .react-flow__node').count()).toBe(0);
    expect(await page.locator('[data-testid="dirty-marker"]').count()).toBe(0);

    // Saved, a flow is clean again: opening another one asks nothing.
    await openFlow(GOOD_FLOW);
    await page.fill('[data-testid="flow-name"]', 'Order status agent v2');
    await page.click('[data-testid="save-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="save-flow"]', 'data-dirty')).toBe('false');
    let asked = false;
    page.once('dialog', (dialog) => {
      asked = true;
      void dialog.dismiss();
    });
    await openFlow(BAD_FLOW);
    expect(asked).toBe(false);
    page.removeAllListeners('dialog');
  });
});
