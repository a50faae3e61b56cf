/**
 * An approval given in the editor, in headless Chromium at 1280×720 against the real `redflow
 * serve`: the refund-approval example runs until its refund waits for a person; the statechart
 * shows awaitingApproval and the refund node a prompt; Approve (with a reason) lets the run finish
 * with the refund made, and Deny in a second run gives the model the denial and marks the node
 * ✖ TOOL_DENIED. A screenshot of the prompt goes to artifacts/screenshots/.
 */
import type { ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import type { RunResponse } from '../../src/server/apiTypes.js';
import { ROOT, SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

let dir: string;
let url: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;

/** Runs the example from the toolbar and waits until its refund waits for approval; the run's trace id. */
async function runToTheWait(): Promise<string> {
  await page.selectOption('[data-testid="flow-select"]', 'refund-approval');
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe('refund-approval');
  await page.fill('[data-testid="run-input"]', 'Please refund order A-1001');
  await page.click('[data-testid="run-flow"]');
  await page.waitForSelector('[data-testid="wait-prompt-refund_order"][data-kind="approval"]', { timeout: 20_000 });
  const { runs } = (await (await fetch(new URL('/api/runs?flow=refund-approval', url))).json()) as { runs: RunResponse[] };
  const waiting = runs.find((run) => run.status === 'waiting');
  expect(waiting?.waiting).toMatchObject({ kind: 'approval', tool: 'refund_order', input: { orderId: 'A-1001', amount: 49.9 } });
  return waiting?.traceId ?? '';
}

async function eventsOf(traceId: string): Promise<AgentEvent[]> {
  return ((await (await fetch(new URL(`/api/runs/${traceId}/events`, url))).json()) as { events: AgentEvent[] }).events;
}

describe.skipIf(SKIP_BROWSER)('an approval given in the editor, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-approval-'));
    const flowsDir = path.join(dir, 'flows');
    const example = path.join(ROOT, 'examples/refund-approval');
    await mkdir(flowsDir, { recursive: true });
    await cp(path.join(example, 'flow.json'), path.join(flowsDir, 'refund-approval.json'));
    await cp(path.join(example, 'answers.json'), path.join(flowsDir, 'answers.json'));
    await cp(path.join(example, 'tools'), path.join(flowsDir, 'tools'), { recursive: true });
    await mkdir(SCREENSHOTS, { recursive: true });
    url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  });

  it('should show the wait on the statechart and a prompt on the refund node, and finish the run once approved', async () => {
    const traceId = await runToTheWait();
    expect(await page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('awaitingApproval');
    expect(await page.getAttribute('[data-testid="statechart-state-awaitingApproval"]', 'data-current')).toBe('true');
    expect(await page.getAttribute('[data-testid="node-refund_order"]', 'data-activity')).toBe('active');
    const prompt = page.locator('[data-testid="wait-prompt-refund_order"]');
    expect(await prompt.textContent()).toContain('"orderId":"A-1001"');
    // Only the node the run waits at asks.
    expect(await page.locator('.wait-prompt').count()).toBe(1);
    await page.fill('[data-testid="wait-prompt-reason"]', 'checked with the customer');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'approval-prompt.png') });

    await page.click('[data-testid="wait-prompt-approve"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    expect(await page.locator('.wait-prompt').count()).toBe(0);
    const events = await eventsOf(traceId);
    expect(events.find((event) => event.type === 'tool.approved')?.data).toMatchObject({ tool: 'refund_order', reason: 'checked with the customer' });
    expect(events.find((event) => event.type === 'tool.completed' && event.data.tool === 'refund_order')?.data).toMatchObject({ ok: true, output: { refunded: true } });
    expect(events.at(-1)?.type).toBe('run.completed');
  });

  it('should give the model a denial with its reason, and mark the refund node ✖ TOOL_DENIED', async () => {
    const traceId = await runToTheWait();
    await page.fill('[data-testid="wait-prompt-reason"]', 'refunds over 40 EUR need a manager');
    await page.click('[data-testid="wait-prompt-deny"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    expect(await page.getAttribute('[data-testid="node-refund_order"]', 'data-failed-code')).toBe('TOOL_DENIED');
    const events = await eventsOf(traceId);
    expect(events.find((event) => event.type === 'tool.denied')?.data).toMatchObject({ reason: 'refunds over 40 EUR need a manager', error: { code: 'TOOL_DENIED' } });
    expect(events.some((event) => event.type === 'tool.completed' && event.data.tool === 'refund_order')).toBe(false);
  });
});
