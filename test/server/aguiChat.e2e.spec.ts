// The example page examples/ag-ui-chat/ in Chromium: it chats with a Redflow flow over AG-UI
// (fetch and SSE, no framework), served by `redflow serve` on the API's origin, through a call
// that waits for the person's approval and a question the page answers as a frontend tool.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedflowServer } from '../../src/server/server.js';
import { openChromium, SKIP_BROWSER } from '../editor/browserHarness.js';
import { waitAnswer, waitingFlow, writeWaitingFlow } from '../support/waitFlow.js';
import { tempDirs } from './serverHarness.js';

const CHAT_PAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples/ag-ui-chat');
const dirs = tempDirs();
const browser = SKIP_BROWSER ? undefined : await openChromium();
afterAll(async () => {
  await browser?.close();
  await dirs.cleanup();
});

describe.skipIf(SKIP_BROWSER)('the AG-UI chat example page', () => {
  it('should chat with a flow: the question, the frontend tool, the approval, and the answer', async () => {
    const root = await dirs.make('redflow-agui-chat-');
    const flowsDir = path.join(root, 'flows');
    await writeWaitingFlow(flowsDir, waitingFlow([waitAnswer.ask('which text?'), waitAnswer.echo('blue'), waitAnswer.final('I echoed blue')]), 'waits.json');
    const server = await createRedflowServer({ flowsDir, runsDir: path.join(root, 'runs'), editorDir: CHAT_PAGE, port: 0, env: {} });
    try {
      const page = await (browser as NonNullable<typeof browser>).newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${server.url}?flow=waits`);
      await page.getByLabel('Your message').fill('echo something');
      await page.getByRole('button', { name: 'Send' }).click();

      // The client tool: the page shows the question and sends the person's answer back.
      await page.getByText('ask_user asks: {"question":"which text?"}').waitFor();
      await page.getByLabel('Your answer').fill('blue');
      await page.getByRole('button', { name: 'Send answer' }).click();

      // The approval: an interrupt, answered with the page's Approve button.
      await page.getByText("the call of echo waits for a person's approval").waitFor();
      await page.getByRole('button', { name: 'Approve' }).click();

      await page.getByText('I echoed blue', { exact: true }).waitFor();
      await expect(page.locator('#status').textContent()).resolves.toBe('done');
      await expect(page.locator('li.tool').allTextContents()).resolves.toEqual([
        'calls ask_user {"question":"which text?"}',
        'ask_user answered blue',
        'calls echo {"text":"blue"}',
        'echo answered {"echoed":"blue"}',
      ]);
      expect(errors).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
