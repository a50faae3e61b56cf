/**
 * The model's answer shown as it is written, in headless Chromium at 1280×720 against the real
 * `redflow serve`, its model a local Chat Completions server that streams slowly: the partial
 * text is on the model node and in the Runtime tab before the log has the answer, and is replaced
 * by the answer as logged once `model.answered` comes.
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

const FLOW = 'streamed-answer';
/** The answer, streamed 8 characters at a time, 150 ms apart (about 3 s in all). */
const ANSWER = JSON.stringify({
  action: 'tool',
  tool: CLIENT_TOOL,
  input: { orderId: 'A-1001' },
  confidence: 0.8,
  message: 'Looking the order A-1001 up on the client before answering the customer about its delivery.',
});

let editor: ChatModelEditor;
let model: FakeChatServer;
let page: Page;

const api = <T>(route: string): Promise<T> => editor.api<T>(route);

describe.skipIf(SKIP_BROWSER)('the answer as the model writes it, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    editor = await openChatModelEditor(FLOW, 'A slowly streamed answer');
    ({ model, page } = editor);
  }, 60_000);

  afterAll(() => editor?.close());

  it('should show the partial answer before it is logged, then the answer as logged', async () => {
    model.enqueue({ kind: 'completion', content: ANSWER, pieceDelayMs: 150 });
    await editor.runFlow('Where is order A-1001?');

    // Some of the answer is there, and much of it is still to come.
    const onNode = page.locator('[data-testid="live-answer-model"][data-state="writing"] .live-answer__text');
    await expect.poll(async () => ((await onNode.count()) === 0 ? 0 : (await onNode.textContent())?.length ?? 0), { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(24);
    const partial = (await onNode.textContent()) ?? '';
    const inPanel = (await page.locator('[data-testid="run-live-answer"][data-state="writing"] .live-answer__text').textContent()) ?? '';
    const { runs } = await api<{ runs: RunResponse[] }>(`/api/runs?flow=${FLOW}`);
    const traceId = runs[0]?.traceId ?? '';
    const loggedSoFar = (await api<{ events: AgentEvent[] }>(`/api/runs/${traceId}/events`)).events;
    await page.screenshot({ path: path.join(SCREENSHOTS, 'live-answer.png') });
    expect(partial.length).toBeLessThan(ANSWER.length - 40);
    expect(ANSWER.startsWith(partial), partial).toBe(true);
    expect(ANSWER.startsWith(inPanel), inPanel).toBe(true);
    expect(inPanel.length).toBeGreaterThanOrEqual(partial.length);
    expect(loggedSoFar.some((event) => event.type === 'model.answered')).toBe(false);

    // Logged: the run waits for the client's lookup, and the node shows the answer as the log has it.
    await page.waitForSelector('[data-testid="live-answer-model"][data-state="logged"]', { timeout: 20_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'live-answer-logged.png') });
    const events = (await api<{ events: AgentEvent[] }>(`/api/runs/${traceId}/events`)).events;
    const answered = events.find((event) => event.type === 'model.answered');
    expect(answered?.type === 'model.answered' && answered.data.text).toBe(ANSWER);
    // The node shows the answer's end (the whole of it is in the Runtime tab).
    expect(await page.locator('[data-testid="live-answer-model"] .live-answer__text').textContent()).toBe(`…${ANSWER.slice(-160)}`);
    expect(await page.locator('[data-testid="run-live-answer"] .live-answer__text').textContent()).toBe(ANSWER);
    expect(await page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('awaitingClient');

    // Once the run is over, the canvas no longer shows it.
    await page.click('[data-testid="abort-run"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    expect(await page.locator('[data-testid^="live-answer-"]').count()).toBe(0);
  }, 60_000);
});
