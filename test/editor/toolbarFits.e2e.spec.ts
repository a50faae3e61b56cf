/**
 * The editor's header and forms at the widths laptops have, in headless Chromium against the real
 * `redflow serve`, at 1280 and 1440 px wide: the toolbar stays on one row, the flow picker, the id
 * and name boxes and the Runs list's flow names show all their text, the id and name boxes are
 * labelled; a model node's form shows only the chosen provider's fields, and a checkbox whose
 * default is true (jsonMode) shows checked. Screenshots go to artifacts/screenshots/.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

/** A flow id as long as a real one gets: a folder, and words. */
const FLOW_ID = 'newcomer/order-status-agent';

let dir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let url: string;

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, name);
  await page.screenshot({ path: file });
  console.log(`screenshot: ${file}`);
}

/** The editor at `width`×800 with the flow open and run once (so the Runs list has a row). */
async function openAndRun(width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 800 } });
  await page.goto(url);
  await page.waitForSelector(`[data-testid="flow-select"] option[value="${FLOW_ID}"]`, { state: 'attached' });
  await page.selectOption('[data-testid="flow-select"]', FLOW_ID);
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(FLOW_ID);
  await page.fill('[data-testid="run-input"]', 'hi');
  await page.click('[data-testid="run-flow"]');
  await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
  await page.locator('[data-testid="run-row"]').first().waitFor();
  return page;
}

/** Each toolbar item's vertical extent: on one row, every item overlaps every other vertically. */
function toolbarRows(page: Page) {
  return page.$$eval('[data-testid="toolbar"] > *', (elements) =>
    elements.map((element) => {
      const box = element.getBoundingClientRect();
      return { top: box.top, bottom: box.bottom };
    }),
  );
}

/** The text boxes whose text must all show: [what, scrollWidth, clientWidth]. */
function clipped(page: Page) {
  return page.evaluate(() => {
    const found: [string, number, number][] = [];
    const check = (what: string, element: Element | null) => {
      if (element instanceof HTMLElement) found.push([what, element.scrollWidth, element.clientWidth]);
    };
    check('toolbar', document.querySelector('[data-testid="toolbar"]'));
    check('run group', document.querySelector('.toolbar__group--run'));
    check('flow id', document.querySelector('[data-testid="flow-id"]'));
    check('flow name', document.querySelector('[data-testid="flow-name"]'));
    document.querySelectorAll('.run-row__flow').forEach((element) => check('run flow', element));
    // A select does not scroll: its chosen option's text is measured against its inner width.
    const select = document.querySelector('[data-testid="flow-select"]') as HTMLSelectElement;
    const style = getComputedStyle(select);
    const context = document.createElement('canvas').getContext('2d')!;
    context.font = `${style.fontSize} ${style.fontFamily}`;
    const text = select.selectedOptions[0]?.textContent ?? '';
    // The drop-down arrow Chromium draws inside the box, beside the text.
    const arrow = 16;
    const inner = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - arrow;
    found.push(['flow picker', Math.ceil(context.measureText(text).width), Math.floor(inner)]);
    return found;
  });
}

describe.skipIf(SKIP_BROWSER)('the editor at 1280 and 1440 px wide, in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-toolbar-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'newcomer/tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'newcomer/tools/echo.mjs'), ECHO_TOOL);
    await writeFile(path.join(flowsDir, `${FLOW_ID}.json`), JSON.stringify(echoFlow([{ action: 'final', message: 'Hello.', confidence: 0.9 }], 'Order status agent')));
    url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  for (const width of [1280, 1440]) {
    it(`should keep the toolbar on one row at ${width} px, with nothing cut off and the id and name boxes labelled`, async () => {
      const page = await openAndRun(width);
      await screenshot(page, `toolbar-${width}.png`);
      const boxes = await toolbarRows(page);
      const clip = await clipped(page);
      for (const a of boxes) for (const b of boxes) expect(a.top < b.bottom && b.top < a.bottom, `one row at ${width} px: ${JSON.stringify(boxes)}`).toBe(true);
      for (const [what, scrollWidth, clientWidth] of clip) expect(scrollWidth, `${what} at ${width} px`).toBeLessThanOrEqual(clientWidth);
      expect(await page.locator('label:has([data-testid="flow-id"])').innerText()).toContain('id');
      expect(await page.locator('label:has([data-testid="flow-name"])').innerText()).toContain('name');
      await page.close();
    }, 60_000);
  }

  it('should show only the scripted fields for a scripted model, and jsonMode checked by default for openai', async () => {
    const page = await openAndRun(1280);
    await page.click('[data-testid="node-llm"]');
    const form = page.locator('[data-testid="config-form"]');
    await form.waitFor();
    const fields = () => form.locator('[data-testid^="field-"]').evaluateAll((all) => all.map((field) => field.getAttribute('data-testid')));
    await expect.poll(fields).toEqual(['field-provider', 'field-answers', 'field-answersFile']);
    await screenshot(page, 'model-form-scripted-1280.png');
    await form.locator('[data-testid="field-provider"] select').selectOption('openai');
    await expect.poll(fields).not.toContain('field-answers');
    expect(await fields()).toContain('field-baseUrl');
    // The decision format and the protocol are offered as their schema's choices.
    expect(await fields()).toEqual(expect.arrayContaining(['field-decisionFormat', 'field-protocol']));
    expect(await form.locator('[data-testid="field-protocol"] select option').allInnerTexts()).toEqual(expect.arrayContaining(['json', 'tools']));
    expect(await form.locator('[data-testid="field-jsonMode"] input[type="checkbox"]').isChecked()).toBe(true);
    await screenshot(page, 'model-form-openai-1280.png');
    await page.close();
  }, 60_000);
});
