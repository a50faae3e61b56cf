/**
 * A person's answer to the model's question, given in the editor, in headless Chromium at
 * 1280×720 against the real `redflow serve`, its model a local Chat Completions server: the model
 * asks (`request_info`), the run waits in awaitingHuman with the question at the top of the side
 * panel, the answer typed there and sent is the observation of the model's next request, and the
 * run finishes; the step's details show the question and the answer, and the Runtime / Debug tab
 * the wait. Ctrl+Enter sends too (Enter writes a new line), and the next question (an escalate,
 * then a request_info) starts with an empty field.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import type { RunResponse } from '../../src/server/apiTypes.js';
import type { FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { SCREENSHOTS, SKIP_BROWSER } from './browserHarness.js';
import { openChatModelEditor, type ChatModelEditor } from './chatModelEditor.js';

const FLOW = 'asks-a-person';
const QUESTION = 'Which order do you mean: the one of May or the one of June?';
const ANSWER = 'The one of June, A-1001';
const FINAL = 'Order A-1001 ships tomorrow.';

let editor: ChatModelEditor;
let model: FakeChatServer;
let page: Page;

const api = <T>(route: string): Promise<T> => editor.api<T>(route);

/** The text of every message of the model's request `index`. */
function messagesOf(index: number): string[] {
  const body = model.requests[index]?.body as { messages?: { content?: unknown }[] } | undefined;
  return (body?.messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content)));
}

describe.skipIf(SKIP_BROWSER)('a question to a person answered in the editor, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    editor = await openChatModelEditor(FLOW, 'Asks a person', { strictModel: true });
    ({ model, page } = editor);
  }, 60_000);

  afterAll(() => editor?.close());

  it('should ask the question in the side panel and finish the run with the answer the model saw', async () => {
    model.enqueue(
      { kind: 'completion', content: JSON.stringify({ action: 'request_info', input: { question: QUESTION, context: { orders: ['A-0999', 'A-1001'] } }, confidence: 0.4 }) },
      { kind: 'completion', content: JSON.stringify({ action: 'final', message: FINAL, confidence: 0.9 }) },
    );
    await editor.runFlow('Where is my order?');

    await page.waitForSelector('[data-testid="question-prompt"]', { timeout: 20_000 });
    expect(await page.getAttribute('[data-testid="question-prompt"]', 'data-action')).toBe('request_info');
    expect(await page.textContent('[data-testid="question-prompt-question"]')).toBe(QUESTION);
    expect(await page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('awaitingHuman');
    // Nothing to send before something is written.
    expect(await page.isDisabled('[data-testid="question-prompt-send"]')).toBe(true);
    const { runs } = await api<{ runs: RunResponse[] }>(`/api/runs?flow=${FLOW}`);
    const traceId = runs[0]?.traceId ?? '';
    expect(runs[0]?.status).toBe('waiting');
    // The Runtime / Debug tab says the run waits, for what, since when and until when.
    expect(await page.textContent('[data-testid="run-state"] .chip')).toBe('waiting');
    expect(await page.getAttribute('[data-testid="run-wait"]', 'data-kind')).toBe('human');
    expect(await page.textContent('[data-testid="run-wait"]')).toBe(`a person's answer to ${JSON.stringify(QUESTION)}`);
    expect(await page.getAttribute('[data-testid="run-wait-since"]', 'title')).toBe(runs[0]?.waiting?.since);
    expect(await page.textContent('[data-testid="run-wait-since"]')).toMatch(/\(\d+ s ago\)/);
    expect(await page.getAttribute('[data-testid="run-wait-deadline"]', 'title')).toBe(runs[0]?.waiting?.deadline);
    expect(await page.textContent('[data-testid="run-wait-deadline"]')).toMatch(/\(23 h 59 min left\)|\(24 h 0 min left\)/);
    await page.fill('[data-testid="question-prompt-answer"]', ANSWER);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'question-prompt.png') });

    await page.click('[data-testid="question-prompt-send"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    expect(await page.locator('[data-testid="question-prompt"]').count()).toBe(0);
    expect(await page.textContent('[data-testid="run-state"] .chip')).toBe('finished');
    expect(await page.locator('[data-testid="run-wait"]').count()).toBe(0);
    expect(await page.textContent('[data-testid="run-answer"]')).toBe(FINAL);
    const events = (await api<{ events: AgentEvent[] }>(`/api/runs/${traceId}/events`)).events;
    expect(events.find((event) => event.type === 'human.answered')?.data).toMatchObject({ answer: ANSWER });
    expect(events.at(-1)?.type).toBe('run.completed');
    // The model's second request carries the answer; its first did not.
    expect(model.requests).toHaveLength(2);
    expect(messagesOf(0).some((text) => text.includes(ANSWER))).toBe(false);
    expect(messagesOf(1).some((text) => text.includes(ANSWER))).toBe(true);

    // The step's details: the question and the answer.
    await page.locator('[data-testid="timeline-row"]').first().click();
    await page.waitForSelector('[data-testid="step-details"][data-iteration="1"]');
    expect(await page.getAttribute('[data-testid="step-exchange"]', 'data-status')).toBe('answered');
    expect(await page.textContent('[data-testid="step-human-question"]')).toContain(QUESTION);
    expect(await page.textContent('[data-testid="step-human-answer"]')).toContain(ANSWER);
  }, 60_000);

  it('should send with Ctrl+Enter (Enter writes a new line), and ask the next question with an empty field', async () => {
    model.reset();
    model.enqueue(
      { kind: 'completion', content: JSON.stringify({ action: 'escalate', input: { reason: 'a refund over the limit', question: 'May I refund 120 EUR?' }, confidence: 0.5 }) },
      { kind: 'completion', content: JSON.stringify({ action: 'request_info', input: { question: 'To which account?' }, confidence: 0.5 }) },
      { kind: 'completion', content: JSON.stringify({ action: 'final', message: 'Refunded.', confidence: 0.9 }) },
    );
    await page.fill('[data-testid="run-input"]', 'Refund order A-1001');
    await page.click('[data-testid="run-flow"]');
    await page.waitForSelector('[data-testid="question-prompt"][data-action="escalate"]', { timeout: 20_000 });
    expect(await page.textContent('[data-testid="question-prompt"]')).toContain('Why: a refund over the limit');
    await page.click('[data-testid="question-prompt-answer"]');
    await page.keyboard.type('Yes, refund it.');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Ticket 42.');
    await page.keyboard.press('Control+Enter');

    await page.waitForSelector('[data-testid="question-prompt"][data-action="request_info"]', { timeout: 20_000 });
    expect(await page.inputValue('[data-testid="question-prompt-answer"]')).toBe('');
    await page.fill('[data-testid="question-prompt-answer"]', 'The card it was paid with');
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 20_000 }).toBe('finished');
    const { runs } = await api<{ runs: RunResponse[] }>(`/api/runs?flow=${FLOW}`);
    const events = (await api<{ events: AgentEvent[] }>(`/api/runs/${runs[0]?.traceId ?? ''}/events`)).events;
    const answers = events.flatMap((event) => (event.type === 'human.answered' ? [event.data.answer] : []));
    expect(answers).toEqual(['Yes, refund it.\nTicket 42.', 'The card it was paid with']);
  }, 60_000);
});
