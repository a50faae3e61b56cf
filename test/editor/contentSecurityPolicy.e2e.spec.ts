/**
 * The editor under a strict Content Security Policy, in headless Chromium against the real
 * `redflow serve`: the server sends `script-src 'self'` (no inline script, no eval) with the
 * editor's files, and the editor works under it — a flow opens, a node's config is checked as it
 * is edited (by the precompiled validators: ajv compiling in the browser would need eval), a run
 * streams to its end, and the inspector's chunk loads on demand — with no violation reported.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECHO_TOOL, echoFlow } from './echoFlow.js';
import { SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

const FLOW_NODES = '[data-testid="canvas"] .react-flow__node';
const ANSWERS = [
  { action: 'tool', tool: 'echo', input: { text: 'hi' }, confidence: 0.5 },
  { action: 'final', message: 'Echoed.', confidence: 0.9 },
];

let dir: string;
let server: ChildProcess | undefined;
let browser: FileBrowser;
let page: Page;
let policy: string | undefined;
/** What the page reported: `securitypolicyviolation` events and console errors naming the policy. */
const violations: string[] = [];

/** The violations the page has recorded so far (its own listener, plus the console). */
async function reported(): Promise<string[]> {
  const inPage = await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
  return [...inPage, ...violations];
}

describe.skipIf(SKIP_BROWSER)('the editor under redflow serve’s Content Security Policy, in Chromium', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-csp-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/echo.mjs'), ECHO_TOOL);
    await writeFile(path.join(flowsDir, 'echo-agent.json'), JSON.stringify(echoFlow(ANSWERS, 'Echo')));
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    // Init scripts run outside the page's policy: a listener there sees every violation.
    await page.addInitScript(() => {
      const found: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = found;
      document.addEventListener('securitypolicyviolation', (event) => found.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy|unsafe-eval/i.test(message.text())) violations.push(message.text());
    });
    // No internet here: the inspector's page is a stub; the popup opening is what counts.
    await page.context().route('https://stately.ai/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>inspector</title>' }));
    const response = await page.goto(url);
    policy = response?.headers()['content-security-policy'];
    await page.waitForSelector('[data-testid="palette"]');
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should be served with a policy that allows no inline script and no eval', () => {
    const directives = new Map((policy ?? '').split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('default-src')).toEqual(["'self'"]);
  });

  it('should open a flow, run it, open the inspector, and check a node’s config as it is edited, with no violation', async () => {
    await page.waitForSelector('[data-testid="flow-select"] option[value="echo-agent"]', { state: 'attached' });
    await page.selectOption('[data-testid="flow-select"]', 'echo-agent');
    await expect.poll(() => page.locator(FLOW_NODES).count()).toBe(3);

    await page.fill('[data-testid="run-input"]', 'hi');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');

    const popupOpened = page.waitForEvent('popup');
    await page.click('[data-testid="open-inspector"]');
    const popup = await popupOpened;
    expect(popup.url()).toContain('stately.ai/inspect');
    await popup.close();
    await page.bringToFront();

    await page.locator(`${FLOW_NODES}[data-id="echo"]`).click({ position: { x: 30, y: 12 } });
    await expect.poll(() => page.getAttribute('[data-testid="node-config"]', 'data-node-id')).toBe('echo');
    await expect.poll(() => page.textContent('[data-testid="config-status"]')).toBe('valid');
    // A timeout the schema refuses: the config check, compiled at build time, says so.
    await page.locator('[data-testid="field-timeoutMs"] input').fill('-5');
    await expect.poll(() => page.textContent('[data-testid="config-status"]')).toBe('1 problem');
    await page.locator('[data-testid="field-timeoutMs"] input').fill('');
    await expect.poll(() => page.textContent('[data-testid="config-status"]')).toBe('valid');

    expect(await reported()).toEqual([]);
  });
});
