// The agent's edit dialog in Node-RED's own editor (real Node-RED, real Chromium): where the Debug
// toggle is, what the run timeline's error column shows, and the run's last action.
import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKIP_BROWSER, launchChromium } from '../editor/browserHarness.js';
import { showTab } from './agentDialog.js';
import { ROOT, deployFlows, freePort, inject, nodeRedInstalls, startNodeRed, userDirWithRedflow, type NodeRedProcess } from './nodeRedProcess.js';

const TAB = '7f3a0c1d5e2b4a69';
const AGENT = 'c41e0a7f9b2d6e03';
const INJECT = 'c41e0a7f9b2d6e01';
const MODEL = 'c41e0a7f9b2d6e06';
const ANSWER = 'Order A-1001 shipped with FastShip.';

/** The order-status example, its scripted model first asking for an order that does not exist (the tool fails: TOOL_FAILED). */
function exampleWithAFailedCall(): unknown[] {
  const nodes = JSON.parse(readFileSync(path.join(ROOT, 'node-red/examples/order-status.json'), 'utf8')) as Record<string, unknown>[];
  const model = nodes.find((node) => node.id === MODEL);
  if (model === undefined) throw new Error('the example has no scripted model');
  model.answers = [
    { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-9999' }, confidence: 0.4 },
    { action: 'tool', tool: 'lookup_order', input: { orderId: 'A-1001' }, confidence: 0.6 },
    { action: 'final', message: ANSWER, confidence: 0.93 },
  ];
  return [{ id: TAB, type: 'tab', label: 'Order status' }, ...nodes];
}

describe.skipIf(SKIP_BROWSER).each(nodeRedInstalls())("$label: the agent's dialog", (install) => {
  let nodeRed: NodeRedProcess;
  let userDir: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    userDir = await userDirWithRedflow();
    nodeRed = await startNodeRed(install, userDir, await freePort());
    await deployFlows(nodeRed.url, exampleWithAFailedCall());
    await inject(nodeRed.url, INJECT);
    const runsDir = path.join(userDir, 'redflow', 'runs', AGENT);
    const deadline = Date.now() + 15_000;
    while ((await readdir(runsDir).catch(() => [])).length === 0) {
      if (Date.now() > deadline) throw new Error(`the run left no log in ${runsDir}:\n${nodeRed.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(nodeRed.url);
    const agent = page.locator(`g.red-ui-flow-node-group[id="${AGENT}"] rect.red-ui-flow-node`);
    await agent.waitFor({ timeout: 20_000 });
    await agent.dblclick();
    await page.locator('#redflow-agent-tabs .red-ui-tab-label').first().waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await nodeRed?.kill();
    if (userDir !== undefined) await rm(path.dirname(userDir), { recursive: true, force: true });
  });

  it('has the Debug toggle on the General tab', async () => {
    await showTab(page, 'general');
    expect(await page.locator('#redflow-agent-tab-general #node-input-debug').count()).toBe(1);
    await expect.poll(() => page.locator('#node-input-debug').isVisible()).toBe(true);
  });

  it("shows a failed step's error code in the timeline's error column", async () => {
    await showTab(page, 'runtime');
    const steps = page.locator('#redflow-agent-timeline tr.redflow-step');
    await expect.poll(() => steps.count(), { timeout: 10_000 }).toBe(3);
    const errorColumn = await steps.evaluateAll((rows) => rows.map((row) => row.querySelectorAll('td')[5]?.textContent ?? null));
    expect(errorColumn).toEqual(['TOOL_FAILED', '', '']);
  });

  it("shows the run's last action: the answer it ended with", async () => {
    await showTab(page, 'runtime');
    const last = page.locator('#redflow-agent-timeline .redflow-last-action');
    await expect.poll(() => last.textContent(), { timeout: 10_000 }).toBe(`Last action: answered (done) ${ANSWER}`);
  });
});
