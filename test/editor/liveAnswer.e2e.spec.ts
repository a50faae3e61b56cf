/**
 * The model's answer shown as it is written, in headless Chromium at 1280×720 against the real
 * `redflow serve`, its model a local Chat Completions server that streams slowly: the partial
 * text (the final answer's message, never its JSON) is on the model node and in the Runtime tab
 * before the log has the answer.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import type { RunResponse } from '../../src/server/apiTypes.js';
import type { FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { SCREENSHOTS, SKIP_BROWSER } from './browserHarness.js';
import { openChatModelEditor, type ChatModelEditor } from './chatModelEditor.js';

const FLOW = 'streamed-answer';
/** The answer, streamed 8 characters at a time, 150 ms apart (about 3 s in all). */
const MESSAGE =
  'Order A-1001 left the warehouse on Monday with FastShip; it was scanned in Lyon this morning and should reach the customer on Thursday before noon.';
/** The answer, streamed 8 characters at a time, 150 ms apart (about 3 s in all): its message is what is shown live. */
const ANSWER = JSON.stringify({ action: 'final', message: MESSAGE, confidence: 0.8 });

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

  it('should show the partial answer text before it is logged, then nothing once the run is over', async () => {
    model.enqueue({ kind: 'completion', content: ANSWER, pieceDelayMs: 150 });
    await editor.runFlow('Where is order A-1001?');

    // Some of the message is there, and much of it is still to come; none of the JSON around it.
    const onNode = page.locator('[data-testid="live-answer-model"][data-state="writing"] .live-answer__text');
    await expect.poll(async () => ((await onNode.count()) === 0 ? 0 : (await onNode.textContent())?.length ?? 0), { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(24);
    const partial = (await onNode.textContent()) ?? '';
    const inPanel = (await page.locator('[data-testid="run-live-answer"][data-state="writing"] .live-answer__text').textContent()) ?? '';
    const { runs } = await api<{ runs: RunResponse[] }>(`/api/runs?flow=${FLOW}`);
    const traceId = runs[0]?.traceId ?? '';
    const loggedSoFar = (await api<{ events: AgentEvent[] }>(`/api/runs/${traceId}/events`)).events;
    await page.screenshot({ path: path.join(SCREENSHOTS, 'live-answer.png') });
    expect(partial.length).toBeLessThan(MESSAGE.length - 40);
    expect(MESSAGE.startsWith(partial), partial).toBe(true);
    expect(MESSAGE.startsWith(inPanel), inPanel).toBe(true);
    expect(inPanel.length).toBeGreaterThanOrEqual(partial.length);
    expect(loggedSoFar.some((event) => event.type === 'model.answered')).toBe(false);

    // The log has the answer once, whole; once the run is over, the canvas no longer shows it.
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    const events = (await api<{ events: AgentEvent[] }>(`/api/runs/${traceId}/events`)).events;
    const answered = events.find((event) => event.type === 'model.answered');
    expect(answered?.type === 'model.answered' && answered.data.text).toBe(ANSWER);
    expect(await page.locator('[data-testid^="live-answer-"]').count()).toBe(0);
  }, 60_000);
});
