/**
 * The editor as a debugger of a run on a cluster, end to end with real processes: a core/memory
 * worker and a model/tool worker (`redflow worker`), `redflow serve --nats` (the built CLI), all on
 * the shared nats-server under a prefix of this file's own, and the editor in headless Chromium at
 * 1280×720. A run of a flow with a tool goes to the cluster; its step details, followed live and
 * then opened again from the Runs list (read from JetStream), show what the model was sent and
 * answered, and what the tool got and returned. Screenshot: artifacts/screenshots/cluster-step-details.png.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removePrefix } from '../distributed/clusterSupport.js';
import { killAll, startRedflow, type RedflowProcess } from '../distributed/workerProcess.js';
import { NATS_URL, connectTestServer, uniquePrefix } from '../nats/natsSupport.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';

/** The flow's id in the flows directory and in the file (the workers host it by the latter). */
const FLOW = 'cluster-echo';
const ANSWERS = [
  { action: 'tool', tool: 'echo', input: { text: 'over the cluster' }, confidence: 0.6 },
  { action: 'final', message: 'The cluster echoed it.', confidence: 0.9 },
];

const prefix = uniquePrefix();
const workers: RedflowProcess[] = [];
let serve: ChildProcess | undefined;
let nc: NatsConnection | undefined;
let dir: string;
let browser: FileBrowser;
let page: Page;

const rows = () => page.locator('[data-testid="timeline-row"]');
const details = () => page.locator('[data-testid="step-details"]');
const text = (testId: string) => details().locator(`[data-testid="${testId}"]`).first().textContent();

/** The first iteration's details as the editor shows them: the tool call, and the model's raw answer. */
async function firstStep() {
  await rows().first().click();
  await expect.poll(() => details().getAttribute('data-iteration')).toBe('1');
  return {
    answer: JSON.parse((await text('step-model-answer')) ?? '') as unknown,
    verdict: await details().locator('[data-testid="step-verdict"]').getAttribute('data-verdict'),
    messages: await details().locator('[data-testid="step-messages"]').textContent(),
    toolInput: JSON.parse((await text('step-tool-input')) ?? '') as unknown,
    toolOutput: JSON.parse((await text('step-tool-output')) ?? '') as unknown,
  };
}

const EXPECTED_FIRST_STEP = {
  answer: ANSWERS[0],
  verdict: 'tool',
  messages: expect.stringContaining('echo this on the cluster'),
  toolInput: { text: 'over the cluster' },
  toolOutput: { echoed: 'over the cluster' },
};

describe.skipIf(SKIP_BROWSER)('step details of a run on a cluster (serve --nats, real workers), in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-cluster-steps-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    const flowPath = path.join(flowsDir, `${FLOW}.json`);
    await writeFile(flowPath, JSON.stringify({ id: FLOW, ...echoFlow(ANSWERS, 'Echo on the cluster') }));
    nc = await connectTestServer('cluster-step-details');
    const cluster = ['--nats', NATS_URL, '--prefix', prefix];
    workers.push(startRedflow(['worker', flowPath, '--role', 'core,memory', ...cluster]), startRedflow(['worker', flowPath, '--role', 'model,tool', ...cluster]));
    await Promise.all(workers.map((worker) => worker.ready()));
    const url = await startServe(flowsDir, undefined, (child) => (serve = child), cluster);
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    serve?.kill('SIGTERM');
    await killAll(workers);
    if (nc) {
      await removePrefix(nc, prefix);
      await nc.drain();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should show the tool’s input and output and the model’s raw answer of a run on the cluster, live and from its log', async () => {
    expect(await page.evaluate(async () => ((await (await fetch('api/health')).json()) as { mode: string }).mode)).toBe('nats');
    await page.waitForSelector(`[data-testid="flow-select"] option[value="${FLOW}"]`, { state: 'attached' });
    await page.selectOption('[data-testid="flow-select"]', FLOW);
    await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(FLOW);
    await page.fill('[data-testid="run-input"]', 'echo this on the cluster');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    await page.click('[data-testid="tab-button-runtime"]');
    await expect.poll(() => rows().evaluateAll((all) => all.map((row) => row.getAttribute('data-action')))).toEqual(['tool', 'final']);
    const traceId = await page.locator('[data-testid="run-state"] .trace-id').textContent();

    // Followed live: the first step, then the final answer's.
    expect(await firstStep()).toEqual(EXPECTED_FIRST_STEP);
    await rows().nth(1).click();
    await expect.poll(() => details().getAttribute('data-iteration')).toBe('2');
    expect(JSON.parse((await text('step-model-answer')) ?? '')).toEqual(ANSWERS[1]);
    expect(await text('step-answer')).toBe('The cluster echoed it.');
    await mkdir(SCREENSHOTS, { recursive: true });
    await details().locator('[data-testid="step-model-answer"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'cluster-step-details.png') });

    // Opened again from the Runs list: the same steps, read from the run's log in JetStream.
    await page.reload();
    await page.waitForSelector(`[data-testid="flow-select"] option[value="${FLOW}"]`, { state: 'attached' });
    await page.selectOption('[data-testid="flow-select"]', FLOW);
    const row = page.locator(`[data-testid="run-row"][data-trace-id="${traceId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    await row.click();
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('replay');
    await page.click('[data-testid="tab-button-runtime"]');
    expect(await firstStep()).toEqual(EXPECTED_FIRST_STEP);

    // And the tool node's last call on the canvas.
    await page.click('[data-testid="node-echo"]');
    await expect.poll(() => page.locator('[data-testid="node-last-step"]').getAttribute('data-iteration')).toBe('1');
    expect(JSON.parse((await text('step-tool-output')) ?? '')).toEqual({ echoed: 'over the cluster' });
  }, 90_000);
});
