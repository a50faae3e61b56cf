import { readFileSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, SKIP_BROWSER, launchChromium } from '../editor/browserHarness.js';
import { ROOT, deployFlows, freePort, inject, nodeRedInstalls, startNodeRed, userDirWithRedflow, type NodeRedProcess } from './nodeRedProcess.js';

const TAB = '7f3a0c1d5e2b4a69';
const AGENT = 'c41e0a7f9b2d6e03';
const INJECT = 'c41e0a7f9b2d6e01';

/**
 * Shows one of the agent dialog's tabs. Node-RED's tabs take two clicks in quick succession for a
 * double click, and ignore the second: click again until the tab shows.
 */
async function showTab(page: Page, tab: string): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt += 1) {
    await page.click(`#red-ui-tab-redflow-agent-tab-${tab} a`);
    try {
      await page.locator(`#redflow-agent-tab-${tab}`).waitFor({ state: 'visible', timeout: 500 });
      return;
    } catch {
      // clicked too soon after the previous click: again
    }
  }
  throw new Error(`the ${tab} tab does not show`);
}

describe.skipIf(SKIP_BROWSER)("Node-RED's editor with the Redflow nodes", () => {
  let nodeRed: NodeRedProcess;
  let userDir: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    userDir = await userDirWithRedflow();
    const [install] = nodeRedInstalls();
    if (install === undefined) throw new Error('no Node-RED to run');
    nodeRed = await startNodeRed(install, userDir, await freePort());
    const example = JSON.parse(readFileSync(path.join(ROOT, 'node-red/examples/order-status.json'), 'utf8')) as unknown[];
    await deployFlows(nodeRed.url, [{ id: TAB, type: 'tab', label: 'Order status' }, ...example]);
    // One run of the example (scripted model, flow tools: nothing else needed), for the Runtime tab.
    await inject(nodeRed.url, INJECT);
    const runsDir = path.join(userDir, 'redflow', 'runs', AGENT);
    const deadline = Date.now() + 15_000;
    while ((await readdir(runsDir).catch(() => [])).length === 0) {
      if (Date.now() > deadline) throw new Error(`the example's run left no log in ${runsDir}:\n${nodeRed.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await nodeRed?.kill();
    if (userDir !== undefined) await rm(path.dirname(userDir), { recursive: true, force: true });
  });

  it("opens the agent's edit dialog with its General, Tools, Runtime / Debug and Errors tabs", async () => {
    await page.goto(nodeRed.url);
    const agent = page.locator(`g.red-ui-flow-node-group[id="${AGENT}"] rect.red-ui-flow-node`);
    await agent.waitFor({ timeout: 20_000 });
    // The palette has the category and its nodes.
    await expect.poll(() => page.locator('.red-ui-palette-node[data-palette-type="redflow-agent"]').count()).toBe(1);
    await agent.dblclick();

    const tabs = page.locator('#redflow-agent-tabs .red-ui-tab-label');
    await tabs.first().waitFor();
    expect((await tabs.allTextContents()).map((text) => text.trim())).toEqual(['General', 'Tools', 'Runtime / Debug', 'Errors']);
    expect(await page.inputValue('#node-input-name')).toBe('Order status assistant');
    expect(await page.inputValue('#node-input-maxIterations')).toBe('5');
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'node-red-agent-general.png') });

    await showTab(page, 'tools');
    const tools = page.locator('#redflow-agent-tools li.redflow-tool');
    await expect.poll(() => tools.evaluateAll((items) => items.map((item) => item.getAttribute('data-tool')))).toEqual(['lookup_order', 'track_shipment']);
    expect(await page.locator('.redflow-tool-allowed:checked').count()).toBe(2);

    await showTab(page, 'runtime');
    const steps = page.locator('#redflow-agent-timeline tr.redflow-step');
    await expect.poll(() => steps.count(), { timeout: 10_000 }).toBe(3);
    expect(await steps.allTextContents()).toEqual([expect.stringMatching(/^1tool\s*lookup_order/), expect.stringMatching(/^2tool\s*track_shipment/), expect.stringMatching(/^3final/)]);
    expect(await page.locator('#redflow-agent-runs tr.redflow-run td').nth(1).textContent()).toBe('finished');
    expect(await page.locator('#redflow-agent-timeline').textContent()).toContain('redflow replay');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'node-red-agent-runtime.png') });

    await showTab(page, 'errors');
    const watched = page.locator('#redflow-agent-errors .redflow-watched li');
    await expect.poll(() => watched.allTextContents()).toEqual([
      expect.stringContaining('✓ Invalid JSON'),
      expect.stringContaining('✓ Tool not allowed'),
      expect.stringContaining('✓ Iteration overflow'),
    ]);
    expect(await page.locator('#redflow-agent-errors').textContent()).toContain('No problems in the wiring or in the latest run.');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'node-red-agent-errors.png') });
  }, 60_000);

  it('lists a wiring problem in the Errors tab before it is deployed, with the code flow validation gives it', async () => {
    // Take the model off the agent in the editor (not deployed): the Errors tab checks what the editor holds.
    await page.click('#node-dialog-cancel');
    await page.locator('#redflow-agent-tabs').waitFor({ state: 'detached' });
    await page.evaluate((agentId) => {
      const red = (globalThis as unknown as { RED: { nodes: { filterLinks(q: object): unknown[]; removeLink(link: unknown): void; node(id: string): unknown }; editor: { edit(node: unknown): void } } }).RED;
      for (const link of red.nodes.filterLinks({ source: red.nodes.node(agentId), sourcePort: 1 })) red.nodes.removeLink(link);
      red.editor.edit(red.nodes.node(agentId));
    }, AGENT);
    await page.locator('#redflow-agent-tabs .red-ui-tab-label').first().waitFor();
    await showTab(page, 'errors');
    const codes = page.locator('#redflow-agent-errors li.redflow-error');
    await expect.poll(() => codes.evaluateAll((items) => items.map((item) => item.getAttribute('data-code'))), { timeout: 10_000 }).toContain('NO_MODEL');
    expect(await page.locator('#redflow-agent-errors li.redflow-error[data-code="NO_MODEL"]').textContent()).toContain("'Order status assistant' has no model connected");
  }, 30_000);
});
