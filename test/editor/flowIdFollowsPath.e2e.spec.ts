/**
 * A new flow saved from the editor under a path of one's own is written with that path as its id,
 * in headless Chromium at 1280×720 against the real `redflow serve`: New, type `newcomer/first`,
 * Save, and the file says `"id": "newcomer/first"` (not the new flow's placeholder "my-flow").
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

let dir: string;
let flowsDir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let url: string;

describe.skipIf(SKIP_BROWSER)('saving a new flow from the editor, in Chromium at 1280×720', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-flow-id-'));
    flowsDir = path.join(dir, 'flows');
    await mkdir(flowsDir, { recursive: true });
    url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('should write the path typed in the flow id box as the id in the file', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.click('[data-testid="new-flow"]');
    await page.fill('[data-testid="flow-id"]', 'newcomer/first');
    await page.click('[data-testid="save-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="save-flow"]', 'data-dirty')).toBe('false');
    const written = JSON.parse(await readFile(path.join(flowsDir, 'newcomer/first.json'), 'utf8')) as { id?: string };
    expect(written.id).toBe('newcomer/first');
    await mkdir(SCREENSHOTS, { recursive: true });
    const shot = path.join(SCREENSHOTS, 'flow-id-follows-path-1280.png');
    await page.screenshot({ path: shot });
    console.log(`screenshot: ${shot}`);
    await page.close();
  }, 30_000);
});
