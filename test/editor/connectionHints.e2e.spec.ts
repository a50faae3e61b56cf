// Connections in the editor, in Chromium against `redflow serve` (build first: `npm run build`): a
// refused connection names the handles in the editor's terms, and a connection dropped on a node's
// body (not on a handle) joins the one handle of it that fits, or says why none does.
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

const FLOW_NODES = '[data-testid="canvas"] .react-flow__node';
const FLOW_EDGES = '[data-testid="canvas"] .react-flow__edge';

let dir: string;
const servers: ChildProcess[] = [];
let browser: FileBrowser;
let page: Page;

async function center(locator: Locator): Promise<{ x: number; y: number }> {
  const box = await locator.boundingBox();
  if (!box) throw new Error('element not visible');
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

async function drop(type: string, x: number, y: number): Promise<void> {
  await page.dragAndDrop(`[data-testid="palette-${type}"]`, '[data-testid="canvas"]', { targetPosition: { x, y } });
}

const node = (id: string) => page.locator(`${FLOW_NODES}[data-id="${id}"]`);
const handle = (nodeId: string, handleId: string) => node(nodeId).locator(`.react-flow__handle[data-handleid="${handleId}"]`);

/** Mouse down on `from`, move, up on the centre of `to` (a handle, or a node's body). */
async function connect(from: Locator, to: Locator): Promise<void> {
  const a = await center(from);
  const b = await center(to);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await page.mouse.move(b.x, b.y, { steps: 5 });
  await page.mouse.up();
}

const toastMessage = () => page.locator('[data-testid="connection-error-message"]');

describe.skipIf(SKIP_BROWSER)('connections in the editor, in Chromium, against redflow serve', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-connections-'));
    await mkdir(path.join(dir, 'flows'), { recursive: true });
    const url = await startServe(path.join(dir, 'flows'), path.join(dir, 'runs'), (child) => servers.push(child));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(url);
    await page.waitForSelector('[data-testid="palette"]');
    await drop('trigger.input', 110, 330);
    await drop('agent.core', 360, 330);
    await drop('model.llm', 640, 150);
    await drop('tool.module', 640, 540);
    await drop('response.chat', 660, 340);
    await page.waitForFunction((selector) => document.querySelectorAll(selector).length === 5, FLOW_NODES);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    for (const child of servers) child.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should explain a refused connection by the handles that would fit', async () => {
    await connect(handle('agent', 'model'), handle('module_tool', 'in'));
    await expect.poll(() => toastMessage().textContent()).toBe(
      "the agent core's model handle (top) connects only to the model's bottom handle, not the tool's top handle",
    );
    expect(await page.textContent('[data-testid="connection-error-code"]')).toBe('EDGE_KIND_MISMATCH');
    expect(await page.locator(FLOW_EDGES).count()).toBe(0);

    // Dragged backwards, from a target handle: the model's handle says what it takes.
    await connect(handle('model', 'in'), handle('input', 'data'));
    await expect.poll(() => toastMessage().textContent()).toBe(
      "the model's bottom handle takes only the agent core's model handle (top), not the input's right handle",
    );
    expect(await page.locator(FLOW_EDGES).count()).toBe(0);
  });

  it('should connect a connection dropped on a node’s body to its one fitting handle', async () => {
    await connect(handle('agent', 'tool'), node('module_tool'));
    await expect.poll(() => page.locator(FLOW_EDGES).count()).toBe(1);
    await connect(handle('model', 'in'), node('agent'));
    await expect.poll(() => page.locator(FLOW_EDGES).count()).toBe(2);
    // Each edge has the kind of the handle it joined (edges are coloured by kind).
    expect(await page.locator(`${FLOW_EDGES}.edge-kind-tool`).count()).toBe(1);
    expect(await page.locator(`${FLOW_EDGES}.edge-kind-model`).count()).toBe(1);
  });

  it('should say why a connection dropped on a node’s body fits none of its handles', async () => {
    await connect(handle('agent', 'model'), node('reply'));
    await expect.poll(() => toastMessage().textContent()).toBe(
      "the output has no handle this connection fits: the agent core's model handle (top) connects only to the model's bottom handle",
    );
    expect(await page.locator(FLOW_EDGES).count()).toBe(2);
  });
});
