/**
 * The editor is legible at the sizes people use it, in headless Chromium against the real
 * `redflow serve` on a copy of examples/ (as `npm run demo:editor` serves it): at 1280×720 each
 * example opens with node text of at least 12 px on screen (its font size times the canvas's
 * zoom), the whole flow in view, a toolbar on one line and no node over another; the palette and
 * the Runs list are both usable at 720 px high. Screenshots at 1280×720 and 1920×1080 go to
 * artifacts/screenshots/ to be looked at.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

const FLOW_ID = 'order-status/flow';
const FLOW_NODES = '[data-testid="canvas"] .react-flow__node';
/** The smallest text size read comfortably on a laptop screen, in screen pixels. */
const MIN_FONT_PX = 12;
/** The text a node card shows: its type, its title, its summary line and a failed call's code. */
const NODE_TEXT = ['.rf-node__head', '.rf-node__title', '.rf-node__summary', '.rf-node__failure'].map((part) => `${FLOW_NODES} ${part}`).join(', ');

let dir: string;
let server: ChildProcess | undefined;
let url: string;
let browser: FileBrowser;
let examples: string[];

/** Opens `id` in `page`, fitted. */
async function open(page: Page, id: string): Promise<void> {
  await page.waitForSelector(`[data-testid="flow-select"] option[value="${id}"]`, { state: 'attached' });
  await page.selectOption('[data-testid="flow-select"]', id);
  await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(id);
  // The editor marks the workspace with the flow it last fitted, once the fit has been applied.
  await page.waitForSelector(`main.workspace[data-fitted="${id}"]`, { state: 'attached' });
}

/** A page of the editor at `width`×`height` with `id` (the order-status example) open and fitted. */
async function openExample(width: number, height: number, id = FLOW_ID): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height } });
  await page.goto(url);
  await open(page, id);
  return page;
}

/** The canvas's zoom, from its viewport's `scale(…)`. */
const zoomOf = (page: Page) =>
  page.$eval('[data-testid="canvas"] .react-flow__viewport', (viewport) => Number(/scale\(([\d.]+)\)/.exec((viewport as HTMLElement).style.transform)?.[1] ?? 'NaN'));

/** True when the middle of `selector` (the first match) is what the user sees there: in the window and not covered. */
const seen = (page: Page, selector: string) =>
  page.$eval(selector, (element) => {
    const box = element.getBoundingClientRect();
    const x = box.left + box.width / 2;
    const y = box.top + Math.min(box.height / 2, 8);
    if (x < 0 || y < 0 || x > window.innerWidth || y > window.innerHeight) return false;
    const hit = document.elementFromPoint(x, y);
    return hit !== null && (hit === element || element.contains(hit));
  });

describe.skipIf(SKIP_BROWSER)('the editor is legible (the examples, Chromium)', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-legible-'));
    const flowsDir = path.join(dir, 'flows');
    await cp(path.join(ROOT, 'examples'), flowsDir, { recursive: true });
    // Every example that is a flow (some are a page, or an agent written as Markdown).
    examples = (await readdir(flowsDir, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() && existsSync(path.join(flowsDir, entry.name, 'flow.json')))
      .map((entry) => `${entry.name}/flow`);
    await mkdir(SCREENSHOTS, { recursive: true });
    url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    // Runs of order-status for the Runs list (a scripted model: each takes milliseconds).
    for (let i = 0; i < 5; i++) {
      const started = await fetch(new URL('api/runs', url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ flow: FLOW_ID, input: `Where is order A-100${i}?` }) });
      expect(started.status, await started.text()).toBe(201);
    }
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should render every example’s node text at 12 px or more on screen at 1280×720, the whole flow in view', async () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    for (const id of examples) {
      await open(page, id);
      const zoom = await zoomOf(page);
      const sizes = await page.$$eval(NODE_TEXT, (elements) => elements.map((element) => ({ text: element.textContent ?? '', px: Number.parseFloat(getComputedStyle(element).fontSize) })));
      expect(sizes.length, id).toBeGreaterThanOrEqual(3 * 2);
      const small = sizes.map((size) => ({ ...size, onScreen: Math.round(size.px * zoom * 10) / 10 })).filter((size) => size.onScreen < MIN_FONT_PX);
      expect(small, `${id} at zoom ${zoom}: text under ${MIN_FONT_PX}px on screen`).toEqual([]);
      // Fitted, not cut: every node inside the canvas.
      const canvas = await page.$eval('[data-testid="canvas"]', (element) => element.getBoundingClientRect().toJSON() as DOMRect);
      const boxes = await page.$$eval(FLOW_NODES, (elements) => elements.map((element) => element.getBoundingClientRect().toJSON() as DOMRect));
      const outside = boxes.filter((box) => box.left < canvas.left || box.right > canvas.right || box.top < canvas.top || box.bottom > canvas.bottom);
      expect(outside, `${id} at zoom ${zoom}: nodes outside ${JSON.stringify(canvas)}`).toEqual([]);
    }
    await page.close();
  }, 60_000);

  it('should keep the toolbar on one line at 1280×720', async () => {
    const page = await openExample(1280, 720);
    const boxes = await page.$$eval('[data-testid="toolbar"] > *', (elements) =>
      elements.map((element) => {
        const box = element.getBoundingClientRect();
        return { name: element.className, top: box.top, bottom: box.bottom, right: box.right };
      }),
    );
    expect(boxes.length).toBeGreaterThan(2);
    // One line: every item shares some height with every other (a wrapped one starts below the others' bottoms).
    const lowestTop = Math.max(...boxes.map((box) => box.top));
    const highestBottom = Math.min(...boxes.map((box) => box.bottom));
    expect(lowestTop, JSON.stringify(boxes)).toBeLessThan(highestBottom);
    expect(Math.max(...boxes.map((box) => box.right))).toBeLessThanOrEqual(1280);
    // The open flow's id and name are shown whole.
    for (const field of ['flow-id', 'flow-name']) {
      const fits = await page.locator(`[data-testid="${field}"]`).evaluate((input) => (input as HTMLInputElement).scrollWidth <= (input as HTMLInputElement).clientWidth);
      expect(fits, `${field} is cut off`).toBe(true);
    }
    await page.close();
  }, 30_000);

  it('should keep the palette and the Runs list both usable at 1280×720', async () => {
    const page = await openExample(1280, 720);
    await expect.poll(() => page.locator('[data-testid="run-row"]').count()).toBe(5);
    // Without scrolling anything: the Runs list's controls and its first three runs are in view…
    for (const selector of ['[data-testid="runs-all"]', '[data-testid="runs-refresh"]']) expect(await seen(page, selector), selector).toBe(true);
    for (let i = 0; i < 3; i++) expect(await seen(page, `[data-testid="run-row"] >> nth=${i}`), `run ${i + 1}`).toBe(true);
    // …and every palette item can be scrolled to in the palette, the runs staying in view.
    const types = await page.locator('[data-testid^="palette-"][draggable]').evaluateAll((items) => items.map((item) => item.getAttribute('data-testid')));
    expect(types.length).toBeGreaterThanOrEqual(9);
    for (const testId of types) {
      await page.locator(`[data-testid="${testId}"]`).scrollIntoViewIfNeeded();
      expect(await seen(page, `[data-testid="${testId}"]`), testId ?? '').toBe(true);
      expect(await seen(page, '[data-testid="run-row"]'), `the first run, with ${testId} in view`).toBe(true);
    }
    // Folded away, the palette leaves the whole side to the runs; unfolded, it is back.
    await page.click('[data-testid="palette-toggle"]');
    expect(await page.locator('[data-testid^="palette-"][draggable]').count()).toBe(0);
    for (let i = 0; i < 5; i++) expect(await seen(page, `[data-testid="run-row"] >> nth=${i}`), `run ${i + 1}, palette folded`).toBe(true);
    await page.click('[data-testid="palette-toggle"]');
    expect(await page.locator('[data-testid^="palette-"][draggable]').count()).toBe(types.length);
    await page.close();
  }, 30_000);

  it('should show no node over another, and write screenshots at 1280×720 and 1920×1080', async () => {
    for (const [width, height] of [
      [1280, 720],
      [1920, 1080],
    ] as const) {
      const page = await openExample(width, height);
      const boxes = await page.$$eval(FLOW_NODES, (elements) => elements.map((element) => element.getBoundingClientRect().toJSON() as DOMRect));
      expect(boxes).toHaveLength(7);
      boxes.forEach((a, i) =>
        boxes.slice(i + 1).forEach((b) => {
          const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
          expect(apart, `${JSON.stringify(a)} overlaps ${JSON.stringify(b)}`).toBe(true);
        }),
      );
      await page.screenshot({ path: path.join(SCREENSHOTS, `order-status-${width}x${height}.png`) });
      await page.close();
    }
  }, 60_000);
});
