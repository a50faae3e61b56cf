// Writes the README's screenshot of an approval asked in the editor (docs/images/approval-prompt.png):
// `npm run build`, then `npm run docs:screenshots:approval`. It runs the built `redflow serve` on a
// copy of examples/refund-approval and drives the editor in headless Chromium (CHROMIUM_PATH, default
// /usr/bin/chromium) until the refund waits for a person, as test/editor/approval.e2e.spec.ts does.
// Tests never write this file: only this script does.
import type { ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, launchChromium, startServe } from '../test/editor/browserHarness.js';

const IMAGE = path.join(ROOT, 'docs/images/approval-prompt.png');

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'redflow-approval-screenshot-'));
  const running: { server?: ChildProcess } = {};
  const browser = await launchChromium();
  try {
    const flowsDir = path.join(dir, 'flows');
    const example = path.join(ROOT, 'examples/refund-approval');
    await mkdir(flowsDir, { recursive: true });
    await cp(path.join(example, 'flow.json'), path.join(flowsDir, 'refund-approval.json'));
    await cp(path.join(example, 'answers.json'), path.join(flowsDir, 'answers.json'));
    await cp(path.join(example, 'tools'), path.join(flowsDir, 'tools'), { recursive: true });
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (running.server = child));
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector('[data-testid="flow-select"] option[value="refund-approval"]', { state: 'attached' });
    await page.selectOption('[data-testid="flow-select"]', 'refund-approval');
    await page.waitForFunction(() => (document.querySelector('[data-testid="flow-id"]') as HTMLInputElement | null)?.value === 'refund-approval');
    await page.fill('[data-testid="run-input"]', 'Please refund order A-1001');
    await page.click('[data-testid="run-flow"]');
    await page.waitForSelector('[data-testid="wait-prompt-refund_order"][data-kind="approval"]', { timeout: 20_000 });
    await page.fill('[data-testid="wait-prompt-reason"]', 'checked with the customer');
    // The canvas's highlights settle on the next frame.
    await page.waitForTimeout(300);
    await mkdir(path.dirname(IMAGE), { recursive: true });
    await page.screenshot({ path: IMAGE });
    console.log(`wrote ${path.relative(ROOT, IMAGE)}`);
  } finally {
    await browser.close();
    running.server?.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
