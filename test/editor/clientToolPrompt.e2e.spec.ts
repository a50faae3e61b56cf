/**
 * A client tool's result given in the editor, in headless Chromium at 1280×720 against the real
 * `redflow serve`, its model a local Chat Completions server: the run waits in awaitingClient with
 * a result field on the tool node; text that is not JSON is refused there, JSON sent as the output
 * is the observation of the model's next request, and an error sent instead reaches the model as
 * the tool's failure (the node marked ✖ TOOL_FAILED).
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import type { RunResponse } from '../../src/server/apiTypes.js';
import type { FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { SCREENSHOTS, SKIP_BROWSER } from './browserHarness.js';
import { openChatModelEditor, type ChatModelEditor } from './chatModelEditor.js';
import { CLIENT_TOOL } from './chatModelFlow.js';

const FLOW = 'client-lookup';
const PROMPT = `[data-testid="wait-prompt-${CLIENT_TOOL}"][data-kind="client"]`;
const CALL = JSON.stringify({ action: 'tool', tool: CLIENT_TOOL, input: { orderId: 'A-1001' }, confidence: 0.8 });
const FINAL = JSON.stringify({ action: 'final', message: 'Done.', confidence: 0.9 });

let editor: ChatModelEditor;
let model: FakeChatServer;
let page: Page;

const api = <T>(route: string): Promise<T> => editor.api<T>(route);

/** The model's last request, as one text. */
const lastRequest = () => model.requests.at(-1)?.rawBody ?? '';

/** Runs the flow until its model's call of the client tool waits for a result; the run's trace id. */
async function runToTheWait(): Promise<string> {
  // Each run with its own answers, whatever an earlier test left.
  model.reset();
  model.enqueue({ kind: 'completion', content: CALL }, { kind: 'completion', content: FINAL });
  await editor.runFlow('Where is order A-1001?');
  await page.waitForSelector(PROMPT, { timeout: 20_000 });
  expect(await page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('awaitingClient');
  const { runs } = await api<{ runs: RunResponse[] }>(`/api/runs?flow=${FLOW}`);
  expect(runs[0]?.waiting).toMatchObject({ kind: 'client', tool: CLIENT_TOOL, input: { orderId: 'A-1001' } });
  // The Runtime / Debug tab says the run waits, and for what.
  expect(await page.textContent('[data-testid="run-state"] .chip')).toBe('waiting');
  expect(await page.textContent('[data-testid="run-wait"]')).toBe(`the result of ${CLIENT_TOOL}, which the client runs`);
  return runs[0]?.traceId ?? '';
}

async function eventsOf(traceId: string): Promise<AgentEvent[]> {
  return (await api<{ events: AgentEvent[] }>(`/api/runs/${traceId}/events`)).events;
}

describe.skipIf(SKIP_BROWSER)("a client tool's result given in the editor, in Chromium at 1280×720", () => {
  beforeAll(async () => {
    editor = await openChatModelEditor(FLOW, 'Looks orders up on the client', { strictModel: true });
    ({ model, page } = editor);
  }, 60_000);

  afterAll(() => editor?.close());

  it('should refuse text that is not JSON, then send JSON as the output the model reads next', async () => {
    const traceId = await runToTheWait();
    expect(await page.textContent(PROMPT)).toContain('"orderId":"A-1001"');
    await page.fill('[data-testid="wait-prompt-result"]', '{status: shipped}');
    await page.click('[data-testid="wait-prompt-send-output"]');
    expect(await page.textContent('[data-testid="wait-prompt-problem"]')).toContain('Not JSON');
    // Refused before anything was sent: the run still waits.
    expect((await api<RunResponse>(`/api/runs/${traceId}`)).status).toBe('waiting');

    await page.fill('[data-testid="wait-prompt-result"]', '{"status": "shipped", "eta": "tomorrow"}');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'client-tool-prompt.png') });
    await page.click('[data-testid="wait-prompt-send-output"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    expect(await page.locator('.wait-prompt').count()).toBe(0);
    const events = await eventsOf(traceId);
    expect(events.find((event) => event.type === 'tool.completed')?.data).toMatchObject({ tool: CLIENT_TOOL, ok: true, output: { status: 'shipped', eta: 'tomorrow' } });
    expect(events.at(-1)?.type).toBe('run.completed');
    expect(lastRequest()).toContain('tomorrow');
  }, 60_000);

  it('should send an error as the tool’s failure, which the model reads', async () => {
    const traceId = await runToTheWait();
    await page.fill('[data-testid="wait-prompt-result"]', 'the shop is closed on Sundays');
    await page.click('[data-testid="wait-prompt-send-error"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    expect(await page.getAttribute(`[data-testid="node-${CLIENT_TOOL}"]`, 'data-failed-code')).toBe('TOOL_FAILED');
    const events = await eventsOf(traceId);
    expect(events.find((event) => event.type === 'tool.completed')?.data).toMatchObject({ tool: CLIENT_TOOL, ok: false, error: { code: 'TOOL_FAILED', message: expect.stringContaining('the shop is closed on Sundays') } });
    expect(lastRequest()).toContain('the shop is closed on Sundays');
  }, 60_000);
});
