// The relay's page in a real Chromium: it embeds the hosted Stately inspector, and says so plainly
// when that page cannot load (this machine has no internet; a closed local port stands in for
// stately.ai so the test does not depend on that).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectInspectorSocket, startInspectorRelay, type InspectorRelay } from '../../src/inspect/index.js';
import { SKIP_BROWSER, launchChromium } from '../editor/browserHarness.js';
import { freePort } from '../node-red/nodeRedProcess.js';

/** A stand-in for the hosted inspector: says it listens, as stately.ai/inspect does, and keeps what it is sent. */
const STAND_IN = `<!DOCTYPE html><script>
  window.received = [];
  window.addEventListener('message', (e) => window.received.push(e.data));
  parent.postMessage({ type: '@statelyai.connected' }, '*');
</script>`;

describe.skipIf(SKIP_BROWSER)("the inspector relay's page in Chromium", () => {
  let browser: Browser;
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
  }, 30_000);
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function relayFor(inspectorUrl: string): Promise<InspectorRelay> {
    const relay = await startInspectorRelay({ port: 0, open: false, inspectorUrl, inspectorLoadTimeoutMs: 1500 });
    cleanups.push(() => relay.stop());
    return relay;
  }

  it('says it cannot load the hosted inspector, and what to do, when that page is unreachable; the relay hears it too', async () => {
    const unreachable = `http://127.0.0.1:${await freePort()}/inspect`;
    const relay = await relayFor(unreachable);
    const page = await browser.newPage();
    cleanups.push(() => page.close());
    await page.goto(relay.pageUrl);
    const message = page.locator('#unavailable');
    await message.waitFor({ state: 'visible', timeout: 10_000 });
    const text = (await message.textContent()) ?? '';
    expect(text).toContain('Cannot load the hosted Stately inspector');
    expect(text).toContain('The Stately inspector is a hosted page');
    expect(text).toContain("check this computer's internet access");
    expect(text).toContain('redflow serve');
    expect(await relay.waitForPage(5000)).toBe('unavailable');
  }, 30_000);

  it('shows the inspector, hands it the run, and tells the relay it loaded, when the hosted page answers', async () => {
    const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(STAND_IN));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const relay = await relayFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}/inspect`);
    const socket = await connectInspectorSocket(relay.socketUrl);
    cleanups.push(() => socket.close());
    socket.send({ type: '@xstate.event', sessionId: 'run-1' } as never);
    await socket.flush();
    const page = await browser.newPage();
    cleanups.push(() => page.close());
    await page.goto(relay.pageUrl);
    expect(await relay.waitForPage(10_000)).toBe('loaded');
    const inspector = page.frames().find((frame) => frame !== page.mainFrame());
    await expect.poll(() => inspector?.evaluate(() => (globalThis as unknown as { received: unknown[] }).received)).toEqual([{ type: '@xstate.event', sessionId: 'run-1' }]);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await page.locator('#unavailable').isVisible()).toBe(false);
  }, 30_000);
});
