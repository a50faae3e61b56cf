// Writes the README's screenshots of the editor as a debugger (docs/images/*.png): `npm run build`,
// then `npm run docs:screenshots`. It runs the built `redflow serve` on a copy of the order-status
// example and drives the editor in headless Chromium (CHROMIUM_PATH, default /usr/bin/chromium), as
// the editor's browser tests do. Tests never write these files: only this script does.
import type { ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { ROOT, launchChromium, startServe } from '../test/editor/browserHarness.js';

const IMAGES = path.join(ROOT, 'docs/images');
/** A laptop screen, taller than the 1280×720 the editor is tested at, so a step's details show whole. */
const VIEWPORT = { width: 1280, height: 960 };

/** order-status with a scripted model asking for an order that does not exist: its lookup fails. */
async function unknownOrderFlow(flowsDir: string): Promise<void> {
  const flow = JSON.parse(await readFile(path.join(flowsDir, 'order-status.json'), 'utf8')) as { name?: string; nodes: { id: string; type: string; config?: unknown }[] };
  const answers = [
    { action: 'tool', tool: 'lookup_order', input: { orderId: 'Z-9999' }, confidence: 0.5 },
    { action: 'final', message: 'There is no order Z-9999: please check the number.', confidence: 0.9 },
  ];
  flow.name = 'Order status, an unknown order';
  flow.nodes = flow.nodes.map((node) => (node.type === 'model.llm' ? { ...node, config: { provider: 'scripted', answers } } : node));
  await writeFile(path.join(flowsDir, 'unknown-order.json'), JSON.stringify(flow, null, 2));
}

/** Opens `flowId`, runs it with `input` and waits until the run has finished, on the Runtime tab. */
async function runFlow(page: Page, flowId: string, input: string): Promise<void> {
  await page.waitForSelector(`[data-testid="flow-select"] option[value="${flowId}"]`, { state: 'attached' });
  await page.selectOption('[data-testid="flow-select"]', flowId);
  await page.waitForFunction((id) => (document.querySelector('[data-testid="flow-id"]') as HTMLInputElement | null)?.value === id, flowId);
  await page.fill('[data-testid="run-input"]', input);
  await page.click('[data-testid="run-flow"]');
  await page.waitForSelector('[data-testid="editor"][data-run-state="finished"]', { timeout: 20_000 });
  await page.click('[data-testid="tab-button-runtime"]');
}

/** Opens the details of timeline row `index` and scrolls the side panel to their top, or to their end. */
async function openStep(page: Page, index: number, show: 'top' | 'end'): Promise<void> {
  await page.locator('[data-testid="timeline-row"]').nth(index).click();
  await page.waitForSelector(`[data-testid="step-details"][data-iteration="${index + 1}"]`);
  await page.locator('[data-testid="step-details"]').evaluate((step, block) => step.scrollIntoView({ block }), show === 'top' ? 'start' : 'end');
  // The canvas's highlights settle on the next frame.
  await page.waitForTimeout(300);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'redflow-docs-screenshots-'));
  const running: { server?: ChildProcess } = {};
  const browser = await launchChromium();
  try {
    const flowsDir = path.join(dir, 'flows');
    const example = path.join(ROOT, 'examples/order-status');
    await mkdir(flowsDir, { recursive: true });
    await cp(path.join(example, 'flow.json'), path.join(flowsDir, 'order-status.json'));
    await cp(path.join(example, 'answers.json'), path.join(flowsDir, 'answers.json'));
    await cp(path.join(example, 'tools'), path.join(flowsDir, 'tools'), { recursive: true });
    await unknownOrderFlow(flowsDir);
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (running.server = child));
    await mkdir(IMAGES, { recursive: true });
    const page = await browser.newPage({ viewport: VIEWPORT });
    await page.goto(url);

    // A finished run, its second step open: what the model was sent and answered, the tool's input and output.
    await runFlow(page, 'order-status', 'Where is order A-1001?');
    await openStep(page, 1, 'end');
    await page.screenshot({ path: path.join(IMAGES, 'editor-step-details.png') });

    // A failed tool call: ✖ and its code on the node, the timeline row and the step.
    await runFlow(page, 'unknown-order', 'Where is order Z-9999?');
    await openStep(page, 0, 'top');
    await page.screenshot({ path: path.join(IMAGES, 'editor-failed-tool.png') });
    console.log(`wrote editor-step-details.png and editor-failed-tool.png in ${path.relative(ROOT, IMAGES)}/`);
  } finally {
    await browser.close();
    running.server?.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
