/**
 * Validate in the editor fails a flow whose tool module does not exist, as Run would, in headless
 * Chromium at 1280×720 against the real `redflow serve`: a tool.module fresh from the palette
 * names `tools/myTool.ts`, which nobody wrote yet, and the problems list says TOOL_MODULE_INVALID
 * on that node.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoFlow } from './echoFlow.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

let dir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let url: string;

describe.skipIf(SKIP_BROWSER)('validating a flow whose tool module is missing, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-validate-tool-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(flowsDir, { recursive: true });
    const flow = echoFlow([{ action: 'final', message: 'never', confidence: 0.9 }]);
    const fresh = { ...flow, nodes: flow.nodes.map((node) => (node.id === 'echo' ? { ...node, config: { module: 'tools/myTool.ts' } } : node)) };
    await writeFile(path.join(flowsDir, 'first.json'), JSON.stringify(fresh));
    url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('should list TOOL_MODULE_INVALID on the tool node when Validate is pressed', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector('[data-testid="flow-select"] option[value="first"]', { state: 'attached' });
    await page.selectOption('[data-testid="flow-select"]', 'first');
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('first');
    await page.click('[data-testid="validate-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="diagnostics"]', 'data-ok')).toBe('false');
    const codes = await page.locator('[data-testid="diagnostic"]').evaluateAll((items) => items.map((item) => item.getAttribute('data-code')));
    expect(codes).toEqual(['TOOL_MODULE_INVALID']);
    await expect.poll(() => page.getAttribute('[data-testid="node-echo"]', 'data-problem')).toBe('error');
    await mkdir(SCREENSHOTS, { recursive: true });
    const shot = path.join(SCREENSHOTS, 'validate-missing-tool-module-1280.png');
    await page.screenshot({ path: shot });
    console.log(`screenshot: ${shot}`);
    await page.close();
  }, 60_000);
});
