/**
 * The REACT statechart can be read, in headless Chromium against the real `redflow serve`, at 1280
 * and 1440 px wide: its state names and arrow labels are at least 12 px on screen, no arrow label
 * lies on a state or on another label, and ⤢ opens the whole chart in a full-size view (closed
 * again with Close). Screenshots go to artifacts/screenshots/.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

/** The smallest text size read comfortably on a laptop screen, in screen pixels. */
const MIN_FONT_PX = 12;

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

interface Rect {
  readonly what: string;
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

/** The on-screen boxes of `root`'s states and labels, and the smallest on-screen font size of their text. */
function measure(page: Page, root: string) {
  return page.evaluate((rootSelector) => {
    const container = document.querySelector(rootSelector)!;
    const viewport = container.querySelector('.react-flow__viewport') as HTMLElement;
    const zoom = new DOMMatrix(getComputedStyle(viewport).transform).a;
    const rect = (element: Element, what: string) => {
      const box = element.getBoundingClientRect();
      return { what, left: box.left, top: box.top, right: box.right, bottom: box.bottom };
    };
    const states = [...container.querySelectorAll('.sc-state')].map((element) => rect(element, `state ${element.textContent}`));
    const labels = [...container.querySelectorAll('[data-testid="statechart-label"]')].map((element) => rect(element, `label ${element.textContent}`));
    const fonts = [...container.querySelectorAll('.sc-state, [data-testid="statechart-label"], .sc-parent')].map((element) => parseFloat(getComputedStyle(element).fontSize) * zoom);
    return { states, labels, smallestFont: Math.min(...fonts) };
  }, root);
}

/** Pairs of boxes that overlap (touching edges do not count). */
function overlaps(a: readonly Rect[], b: readonly Rect[], same: boolean): string[] {
  const found: string[] = [];
  a.forEach((one, i) =>
    b.forEach((other, j) => {
      if (same && j <= i) return;
      if (one.left < other.right - 0.5 && other.left < one.right - 0.5 && one.top < other.bottom - 0.5 && other.top < one.bottom - 0.5) found.push(`${one.what} × ${other.what}`);
    }),
  );
  return found;
}

describe.skipIf(SKIP_BROWSER)('the REACT statechart, in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-statechart-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(flowsDir, { recursive: true });
    url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  for (const width of [1280, 1440]) {
    it(`should draw labels of 12 px or more that lie on no state and no other label, and open a full-size view, at ${width} px`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 800 } });
      await page.goto(url);
      await page.locator('[data-testid="statechart"] .sc-state').first().waitFor();
      const panel = await measure(page, '[data-testid="statechart"] .statechart__canvas');
      expect(panel.smallestFont, 'panel font size on screen').toBeGreaterThanOrEqual(MIN_FONT_PX);
      await screenshot(page, `statechart-panel-${width}.png`);

      await page.click('[data-testid="statechart-enlarge"]');
      await page.locator('[data-testid="statechart-full"] .sc-state').first().waitFor();
      await page.waitForTimeout(300);
      const full = await measure(page, '[data-testid="statechart-full"]');
      expect(full.labels.length).toBeGreaterThan(10);
      expect(full.smallestFont, 'full-size font size on screen').toBeGreaterThanOrEqual(MIN_FONT_PX);
      expect(overlaps(full.labels, full.labels, true), 'labels on labels').toEqual([]);
      expect(overlaps(full.labels, full.states, false), 'labels on states').toEqual([]);
      // The label the review could not find, hidden under awaitingClient before.
      expect(full.labels.map((label) => label.what)).toContainEqual(expect.stringContaining('confidenceThresholdReached'));
      await screenshot(page, `statechart-full-${width}.png`);
      await page.click('[data-testid="statechart-close"]');
      await page.locator('[data-testid="statechart-full"]').waitFor({ state: 'detached' });
      await page.close();
    }, 60_000);
  }
});
