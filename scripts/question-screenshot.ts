// Writes the README's screenshot of a question the model asks a person, in the editor
// (docs/images/question-prompt.png): `npm run build`, then `npm run docs:screenshots:question`. It
// runs the built `redflow serve` on a copy of examples/order-status whose scripted model first asks
// which order is meant (request_info), and drives the editor in headless Chromium (CHROMIUM_PATH,
// default /usr/bin/chromium) until the run waits for the answer, as
// test/editor/questionPrompt.e2e.spec.ts does. Tests never write this file: only this script does.
import type { ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, launchChromium, startServe } from '../test/editor/browserHarness.js';

const IMAGE = path.join(ROOT, 'docs/images/question-prompt.png');
const FLOW = 'order-status';

/** The example's answers, after a question about which order is meant. */
async function askingAnswers(example: string): Promise<unknown[]> {
  const answers = JSON.parse(await readFile(path.join(example, 'answers.json'), 'utf8')) as unknown[];
  const question = {
    action: 'request_info',
    input: { question: 'You have two open orders: A-1001 (May) and A-1002 (June). Which one do you mean?', context: { openOrders: ['A-1001', 'A-1002'] } },
    confidence: 0.4,
  };
  return [question, ...answers];
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'redflow-question-screenshot-'));
  const running: { server?: ChildProcess } = {};
  const browser = await launchChromium();
  try {
    const flowsDir = path.join(dir, 'flows');
    const example = path.join(ROOT, 'examples/order-status');
    await mkdir(flowsDir, { recursive: true });
    const flow = JSON.parse(await readFile(path.join(example, 'flow.json'), 'utf8')) as { nodes: { type: string; config?: unknown }[] };
    const answers = await askingAnswers(example);
    flow.nodes = flow.nodes.map((node) => (node.type === 'model.llm' ? { ...node, config: { provider: 'scripted', answers } } : node));
    await writeFile(path.join(flowsDir, `${FLOW}.json`), JSON.stringify(flow, null, 2));
    await cp(path.join(example, 'tools'), path.join(flowsDir, 'tools'), { recursive: true });
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (running.server = child));
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector(`[data-testid="flow-select"] option[value="${FLOW}"]`, { state: 'attached' });
    await page.selectOption('[data-testid="flow-select"]', FLOW);
    await page.waitForFunction((id) => (document.querySelector('[data-testid="flow-id"]') as HTMLInputElement | null)?.value === id, FLOW);
    await page.fill('[data-testid="run-input"]', 'Where is my order?');
    await page.click('[data-testid="run-flow"]');
    await page.waitForSelector('[data-testid="question-prompt"]', { timeout: 20_000 });
    await page.fill('[data-testid="question-prompt-answer"]', 'The one of May, A-1001');
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
