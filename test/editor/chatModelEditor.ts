import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { SCREENSHOTS, openChromium, type FileBrowser, startServe } from './browserHarness.js';
import { chatModelFlow } from './chatModelFlow.js';

// The setup of the editor's browser tests of one flow whose model is a local Chat Completions
// server (chatModelFlow): its own `redflow serve`, and a page at 1280×720 on it.

/** A running `redflow serve` of one chat-model flow, and a Chromium page on its editor. */
export interface ChatModelEditor {
  readonly url: string;
  readonly model: FakeChatServer;
  readonly page: Page;
  /** GET `route` of the server's API, as JSON. */
  api<T>(route: string): Promise<T>;
  /** Opens the flow in the editor and runs it with `input`. */
  runFlow(input: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the model server, writes the flow `flowId` (named `name`), starts `redflow serve` on it
 * and opens the editor. `strictModel`: a request the test did not queue an answer for is refused
 * (400) instead of answered by the server's default.
 */
export async function openChatModelEditor(flowId: string, name: string, options: { readonly strictModel?: boolean } = {}): Promise<ChatModelEditor> {
  const model = await startFakeChatCompletionsServer();
  if (options.strictModel === true) model.setFallback({ kind: 'error', status: 400, message: 'unexpected extra request' });
  const dir = await mkdtemp(path.join(tmpdir(), `redflow-${flowId}-`));
  const flowsDir = path.join(dir, 'flows');
  await mkdir(flowsDir, { recursive: true });
  await writeFile(path.join(flowsDir, `${flowId}.json`), JSON.stringify(chatModelFlow(model.baseUrl, name)));
  await mkdir(SCREENSHOTS, { recursive: true });
  let server: ChildProcess | undefined;
  let browser: FileBrowser | undefined;
  const close = async () => {
    await browser?.close();
    server?.kill('SIGTERM');
    await model.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const url = await startServe(flowsDir, path.join(dir, 'runs'), (child) => (server = child));
    browser = await openChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    return {
      url,
      model,
      page,
      api: async <T>(route: string) => (await (await fetch(new URL(route, url))).json()) as T,
      async runFlow(input) {
        await page.waitForSelector(`[data-testid="flow-select"] option[value="${flowId}"]`, { state: 'attached' });
        await page.selectOption('[data-testid="flow-select"]', flowId);
        await expect.poll(() => page.inputValue('[data-testid="flow-id"]')).toBe(flowId);
        await page.fill('[data-testid="run-input"]', input);
        await page.click('[data-testid="run-flow"]');
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
