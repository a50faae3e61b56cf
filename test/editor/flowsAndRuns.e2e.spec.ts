/**
 * The editor as a debugger, in headless Chromium at 1280×720 against the real `redflow serve`:
 * a tool node whose last call failed is marked on the canvas, flows are renamed and deleted from
 * the toolbar, and a run whose flow is gone or changed opens with a notice.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

/** A good tool call, a failing one, then the final answer. */
const ANSWERS = [
  { action: 'tool', tool: 'echo', input: { text: 'one' }, confidence: 0.4 },
  { action: 'tool', tool: 'echo', input: { text: 'fail' }, confidence: 0.3 },
  { action: 'final', message: 'Echoed once, then the tool failed.', confidence: 0.9 },
];

let dir: string;
let flowsDir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;

async function openFlow(id: string): Promise<void> {
  await page.waitForSelector(`[data-testid="flow-select"] option[value="${id}"]`, { state: 'attached' });
  await page.selectOption('[data-testid="flow-select"]', id);
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(id);
}

async function runToEnd(input: string): Promise<void> {
  await page.fill('[data-testid="run-input"]', input);
  await page.click('[data-testid="run-flow"]');
  await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
}

const options = () => page.locator('[data-testid="flow-select"] option').evaluateAll((all) => all.map((o) => o.getAttribute('value')));
const flowFile = (id: string) => path.join(flowsDir, `${id}.json`);

describe.skipIf(SKIP_BROWSER)('flows and runs in the editor, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-flows-runs-'));
    flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    await writeFile(flowFile('echo-agent'), JSON.stringify(echoFlow(ANSWERS)));
    await writeFile(flowFile('doomed-agent'), JSON.stringify(echoFlow(ANSWERS)));
    await writeFile(flowFile('old-name'), JSON.stringify(echoFlow(ANSWERS)));
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

  it('should mark a tool node whose last call failed with ✖ and the error code, as of the scrubbed position', async () => {
    await openFlow('echo-agent');
    await runToEnd('echo please');
    const node = page.locator('[data-testid="node-echo"]');
    await expect.poll(() => node.getAttribute('data-failed-code')).toBe('TOOL_FAILED');
    expect(await page.locator('[data-testid="node-failure-echo"]').textContent()).toBe('✖ TOOL_FAILED');
    // Other nodes carry no mark.
    expect(await page.getAttribute('[data-testid="node-llm"]', 'data-failed-code')).toBe('');
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'failed-tool-node.png') });

    // Back before the failing call: the first call succeeded, so no mark.
    await page.locator('[data-testid="scrubber"]').fill('1');
    await expect.poll(() => node.getAttribute('data-failed-code')).toBe('');
    expect(await page.locator('[data-testid="node-failure-echo"]').count()).toBe(0);
  });

  it('should rename a flow (saved under the new id, the old file deleted) and delete one after a confirmation', async () => {
    await openFlow('old-name');
    page.once('dialog', (dialog) => void dialog.accept('team/new-name'));
    await page.click('[data-testid="rename-flow"]');
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('team/new-name');
    await expect.poll(() => options()).toContain('team/new-name');
    expect(await options()).not.toContain('old-name');
    expect(existsSync(flowFile('team/new-name'))).toBe(true);
    expect(existsSync(flowFile('old-name'))).toBe(false);
    expect(await page.getAttribute('[data-testid="save-flow"]', 'data-dirty')).toBe('false');

    // Declined: nothing is deleted.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.click('[data-testid="delete-flow"]');
    expect(existsSync(flowFile('team/new-name'))).toBe(true);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.click('[data-testid="delete-flow"]');
    await expect.poll(() => options()).not.toContain('team/new-name');
    expect(existsSync(flowFile('team/new-name'))).toBe(false);
    expect(await page.inputValue('[data-testid="flow-id"]')).toBe('my-flow');
    expect(await page.locator('[data-testid^="node-"][data-node-type]').count()).toBe(0);
  });

  it('should open a run whose flow was deleted with a notice and its timeline, not over another flow’s graph', async () => {
    await openFlow('doomed-agent');
    await runToEnd('doomed');
    // Deleted behind the editor's back, then the page reloaded.
    await rm(flowFile('doomed-agent'));
    await page.reload();
    await openFlow('echo-agent');
    expect(await options()).not.toContain('doomed-agent');
    await page.check('[data-testid="runs-all"]');
    const row = page.locator('[data-testid="run-row"][data-flow="doomed-agent"]');
    await expect.poll(() => row.count()).toBe(1);
    await row.click();
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('replay');
    await expect.poll(() => page.getAttribute('[data-testid="run-flow-notice"]', 'data-kind')).toBe('gone');
    expect(await page.locator('[data-testid="run-flow-notice"]').textContent()).toContain('doomed-agent');
    // echo-agent's graph is not shown under the doomed run.
    expect(await page.locator('[data-testid^="node-"][data-node-type]').count()).toBe(0);
    await expect.poll(() => page.locator('[data-testid="timeline-row"]').count()).toBe(3);
  });

  it('should open a run whose flow changed after it with a notice', async () => {
    await openFlow('echo-agent');
    await page.uncheck('[data-testid="runs-all"]');
    await runToEnd('before the change');
    await page.fill('[data-testid="flow-name"]', 'Echo, changed');
    await page.click('[data-testid="save-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="save-flow"]', 'data-dirty')).toBe('false');
    await page.click('[data-testid="runs-refresh"]');
    const row = page.locator('[data-testid="run-row"]').first();
    await expect.poll(() => row.getAttribute('data-flow')).toBe('echo-agent');
    await row.click();
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('replay');
    await expect.poll(() => page.getAttribute('[data-testid="run-flow-notice"]', 'data-kind')).toBe('changed');
  });
});
