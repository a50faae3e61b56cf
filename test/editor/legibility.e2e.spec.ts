/**
 * The editor is legible at the sizes people use it, in headless Chromium against the real
 * `redflow serve`: the order-status example opened at 1280×720 has node text of at least 12 px,
 * a toolbar on one line and no node over another; screenshots at 1280×720 and 1920×1080 go to
 * artifacts/screenshots/ to be looked at.
 */
import type { ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, SCREENSHOTS, SKIP_BROWSER, launchChromium, startServe } from './browserHarness.js';

const FLOW_ID = 'order-status';
const FLOW_NODES = '[data-testid="canvas"] .react-flow__node';
/** The smallest font size read comfortably on a laptop screen. */
const MIN_FONT_PX = 12;

let dir: string;
let server: ChildProcess | undefined;
let url: string;
let browser: Browser;

/** A page of the editor at `width`×`height` with the order-status example open and fitted. */
async function openExample(width: number, height: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height } });
  await page.goto(url);
  await page.waitForSelector(`[data-testid="flow-select"] option[value="${FLOW_ID}"]`, { state: 'attached' });
  await page.selectOption('[data-testid="flow-select"]', FLOW_ID);
  await page.waitForSelector(`${FLOW_NODES} [data-testid="node-reply"]`);
  // fitView runs on the next animation frame; wait until the viewport stops moving.
  await page.waitForFunction(() => {
    const pane = document.querySelector('[data-testid="canvas"] .react-flow__viewport') as HTMLElement | null;
    const now = pane?.style.transform ?? '';
    const w = window as unknown as { lastTransform?: string };
    const still = now !== '' && now === w.lastTransform;
    w.lastTransform = now;
    return still;
  }, undefined, { polling: 100 });
  return page;
}

describe.skipIf(SKIP_BROWSER)('the editor is legible (order-status example, Chromium)', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-legible-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(flowsDir, { recursive: true });
    const example = path.join(ROOT, 'examples/order-status');
    await cp(path.join(example, 'flow.json'), path.join(flowsDir, `${FLOW_ID}.json`));
    await cp(path.join(example, 'answers.json'), path.join(flowsDir, 'answers.json'));
    await cp(path.join(example, 'tools'), path.join(flowsDir, 'tools'), { recursive: true });
    await mkdir(SCREENSHOTS, { recursive: true });
    url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should draw node labels and subtitles at 12 px or more at 1280×720', async () => {
    const page = await openExample(1280, 720);
    const sizes = await page.$$eval(`${FLOW_NODES} .rf-node__head, ${FLOW_NODES} .rf-node__title, ${FLOW_NODES} .rf-node__summary`, (elements) =>
      elements.map((element) => ({ text: element.textContent ?? '', px: Number.parseFloat(getComputedStyle(element).fontSize) })),
    );
    expect(sizes.length).toBeGreaterThanOrEqual(7 * 2);
    const small = sizes.filter((size) => size.px < MIN_FONT_PX);
    expect(small, `text under ${MIN_FONT_PX}px: ${JSON.stringify(small)}`).toEqual([]);
    await page.close();
  }, 30_000);

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
