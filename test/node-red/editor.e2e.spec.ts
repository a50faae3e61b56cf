import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser } from '../editor/browserHarness.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';
import { showTab } from './agentDialog.js';
import { ROOT, deployFlows, freePort, inject, nodeRedInstalls, startNodeRed, userDirWithRedflow, type NodeRedProcess } from './nodeRedProcess.js';

const TAB = '7f3a0c1d5e2b4a69';
const AGENT = 'c41e0a7f9b2d6e03';
const INJECT = 'c41e0a7f9b2d6e01';

describe.skipIf(SKIP_BROWSER).each(nodeRedInstalls())("$label: Node-RED's editor with the Redflow nodes", (install) => {
  let nodeRed: NodeRedProcess;
  let userDir: string;
  let browser: FileBrowser;
  let page: Page;

  beforeAll(async () => {
    userDir = await userDirWithRedflow();
    nodeRed = await startNodeRed(install, userDir, await freePort());
    const example = JSON.parse(readFileSync(path.join(ROOT, 'node-red/examples/order-status.json'), 'utf8')) as unknown[];
    await deployFlows(nodeRed.url, [{ id: TAB, type: 'tab', label: 'Order status' }, ...example]);
    // One run of the example (scripted model, flow tools: nothing else needed), for the Runtime tab.
    await inject(nodeRed.url, INJECT);
    const runsDir = path.join(userDir, 'redflow', 'runs', AGENT);
    const deadline = Date.now() + 15_000;
    while ((await readdir(runsDir).catch(() => [])).length === 0) {
      if (Date.now() > deadline) throw new Error(`the example's run left no log in ${runsDir}:\n${nodeRed.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await nodeRed?.kill();
    if (userDir !== undefined) await rm(path.dirname(userDir), { recursive: true, force: true });
  });

  it('shows the redflow category in the palette, each node with the icon the package ships and its help text', async () => {
    await page.goto(nodeRed.url);
    const types = ['redflow-agent', 'redflow-model', 'redflow-tool-http', 'redflow-tool-postgres', 'redflow-tool-module', 'redflow-tool-mcp', 'redflow-tool-in', 'redflow-tool-out', 'redflow-memory', 'redflow-input', 'redflow-response', 'redflow-end'];
    const palette = page.locator('#red-ui-palette-redflow .red-ui-palette-node');
    await expect.poll(() => palette.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-palette-type'))), { timeout: 20_000 }).toEqual(types);
    const shown = await page.evaluate((all) => {
      const red = (globalThis as unknown as { RED: { nodes: { getType(type: string): unknown; getNodeHelp(type: string): string | undefined }; utils: { getNodeIcon(def: unknown): string } } }).RED;
      return all.map((type) => ({ type, icon: red.utils.getNodeIcon(red.nodes.getType(type)), help: (red.nodes.getNodeHelp(type) ?? '').trim() }));
    }, types);
    for (const { type, icon, help } of shown) {
      // Node-RED finds a module's icons only next to its node files: a missing one falls back to its own arrow.
      expect(icon, type).toMatch(/^icons\/node-red-contrib-redflow\/redflow-[a-z]+\.svg$/);
      const served = await (await fetch(`${nodeRed.url}/${icon}`)).text();
      expect(served, type).toBe(readFileSync(path.join(ROOT, 'node-red/nodes', icon.replace('node-red-contrib-redflow/', '')), 'utf8'));
      expect(help.length, type).toBeGreaterThan(40);
    }
  }, 30_000);

  it("opens the agent's edit dialog with its General, Tools, Runtime / Debug and Errors tabs", async () => {
    await page.goto(nodeRed.url);
    const agent = page.locator(`g.red-ui-flow-node-group[id="${AGENT}"] rect.red-ui-flow-node`);
    await agent.waitFor({ timeout: 20_000 });
    // The palette has the category and its nodes.
    await expect.poll(() => page.locator('.red-ui-palette-node[data-palette-type="redflow-agent"]').count()).toBe(1);
    await agent.dblclick();

    const tabs = page.locator('#redflow-agent-tabs .red-ui-tab-label');
    await tabs.first().waitFor();
    expect((await tabs.allTextContents()).map((text) => text.trim())).toEqual(['General', 'Tools', 'Runtime / Debug', 'Errors']);
    expect(await page.inputValue('#node-input-name')).toBe('Order status assistant');
    expect(await page.inputValue('#node-input-maxIterations')).toBe('5');
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'node-red-agent-general.png') });

    await showTab(page, 'tools');
    const tools = page.locator('#redflow-agent-tools li.redflow-tool');
    await expect.poll(() => tools.evaluateAll((items) => items.map((item) => item.getAttribute('data-tool')))).toEqual(['lookup_order', 'track_shipment']);
    expect(await page.locator('.redflow-tool-allowed:checked').count()).toBe(2);

    await showTab(page, 'runtime');
    const steps = page.locator('#redflow-agent-timeline tr.redflow-step');
    await expect.poll(() => steps.count(), { timeout: 10_000 }).toBe(3);
    expect(await steps.allTextContents()).toEqual([expect.stringMatching(/^1tool\s*lookup_order/), expect.stringMatching(/^2tool\s*track_shipment/), expect.stringMatching(/^3final/)]);
    expect(await page.locator('#redflow-agent-runs tr.redflow-run td').nth(1).textContent()).toBe('finished');
    expect(await page.locator('#redflow-agent-timeline').textContent()).toContain('redflow replay');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'node-red-agent-runtime.png') });

    await showTab(page, 'errors');
    const watched = page.locator('#redflow-agent-errors .redflow-watched li');
    await expect.poll(() => watched.allTextContents()).toEqual([
      expect.stringContaining('✓ Invalid JSON'),
      expect.stringContaining('✓ Tool not allowed'),
      expect.stringContaining('✓ Iteration overflow'),
    ]);
    expect(await page.locator('#redflow-agent-errors').textContent()).toContain('No problems in the wiring or in the latest run.');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'node-red-agent-errors.png') });
  }, 60_000);

  it('lists a wiring problem in the Errors tab before it is deployed, with the code flow validation gives it', async () => {
    // Take the model off the agent in the editor (not deployed): the Errors tab checks what the editor holds.
    await page.click('#node-dialog-cancel');
    await page.locator('#redflow-agent-tabs').waitFor({ state: 'detached' });
    await page.evaluate((agentId) => {
      const red = (globalThis as unknown as { RED: { nodes: { filterLinks(q: object): unknown[]; removeLink(link: unknown): void; node(id: string): unknown }; editor: { edit(node: unknown): void } } }).RED;
      for (const link of red.nodes.filterLinks({ source: red.nodes.node(agentId), sourcePort: 1 })) red.nodes.removeLink(link);
      red.editor.edit(red.nodes.node(agentId));
    }, AGENT);
    await page.locator('#redflow-agent-tabs .red-ui-tab-label').first().waitFor();
    await showTab(page, 'errors');
    const codes = page.locator('#redflow-agent-errors li.redflow-error');
    await expect.poll(() => codes.evaluateAll((items) => items.map((item) => item.getAttribute('data-code'))), { timeout: 10_000 }).toContain('NO_MODEL');
    expect(await page.locator('#redflow-agent-errors li.redflow-error[data-code="NO_MODEL"]').textContent()).toContain("'Order status assistant' has no model connected");
  }, 30_000);

  it("edits the agent's verification and budget in its General tab, keeps them on the node and shows them again", async () => {
    await page.goto(nodeRed.url);
    const agent = page.locator(`g.red-ui-flow-node-group[id="${AGENT}"] rect.red-ui-flow-node`);
    await agent.waitFor({ timeout: 20_000 });
    const saved = () =>
      page.evaluate((id) => {
        const node = (globalThis as unknown as { RED: { nodes: { node(id: string): { verification: unknown; budget: unknown } } } }).RED.nodes.node(id);
        return { verification: node.verification, budget: node.budget };
      }, AGENT);
    // The tray is ready once its OK button shows and the form holds the node's values (the
    // editor fills it after the fields exist): edits made before that could be overwritten.
    const open = async (budgetShown: string) => {
      await agent.dblclick();
      await page.locator('#node-dialog-ok').waitFor({ state: 'visible' });
      await expect.poll(() => page.inputValue('#redflow-agent-max-cost')).toBe(budgetShown);
    };
    const ok = async () => {
      await page.click('#node-dialog-ok');
      await page.locator('#node-dialog-ok').waitFor({ state: 'hidden' });
    };
    await open('');
    expect(await page.inputValue('#redflow-agent-verification')).toBe('off');
    expect(await page.locator('#redflow-agent-rubric').isVisible()).toBe(false);
    await page.selectOption('#redflow-agent-verification', 'model');
    await page.fill('#redflow-agent-verifier', 'judge');
    await page.fill('#redflow-agent-rubric', 'Every order is named by its id.');
    await page.fill('#redflow-agent-max-failures', '3');
    await page.fill('#redflow-agent-max-tokens', '20000');
    await page.fill('#redflow-agent-max-cost', '0.25');
    await ok();
    await expect.poll(saved).toEqual({ verification: { model: 'judge', rubric: 'Every order is named by its id.', maxFailures: 3 }, budget: { maxTokens: 20000, maxCost: 0.25 } });

    // Opened again, the dialog shows them; self drops the verifier and keeps the rest.
    await open('0.25');
    expect(await page.inputValue('#redflow-agent-verification')).toBe('model');
    expect(await page.inputValue('#redflow-agent-verifier')).toBe('judge');
    expect(await page.inputValue('#redflow-agent-max-cost')).toBe('0.25');
    await page.selectOption('#redflow-agent-verification', 'self');
    expect(await page.locator('#redflow-agent-verifier').isVisible()).toBe(false);
    await ok();
    await expect.poll(saved).toEqual({ verification: { rubric: 'Every order is named by its id.', maxFailures: 3 }, budget: { maxTokens: 20000, maxCost: 0.25 } });

    // Off and emptied: nothing left on the node (the example deploys as it was).
    await open('0.25');
    await page.selectOption('#redflow-agent-verification', 'off');
    // Emptying a field is select-all then Delete: a focus the tray moves in between leaves the
    // text (seen on CI), so the field is emptied again until it reads empty, as a user would.
    const empty = (field: string) => expect.poll(async () => (await page.fill(field, ''), page.inputValue(field))).toBe('');
    await empty('#redflow-agent-max-tokens');
    await empty('#redflow-agent-max-cost');
    await ok();
    await expect.poll(saved).toEqual({ verification: '', budget: '' });
  }, 60_000);

  it('builds an agent as a user does: nodes dragged from the palette, wired, filled in their dialogs, deployed, and a run from the inject button', async () => {
    const model: FakeChatServer = await startFakeChatCompletionsServer();
    // A page of its own: the previous test left undeployed edits in its editor.
    const user = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await user.goto(nodeRed.url);
      await user.locator('.red-ui-palette-node[data-palette-type="redflow-agent"]').waitFor({ timeout: 20_000 });
      const active = () => user.evaluate(() => (globalThis as unknown as { RED: { workspaces: { active(): string } } }).RED.workspaces.active());
      const example = await active();
      // A new flow tab (the workspace's + button).
      await user.evaluate(() => (globalThis as unknown as { RED: { workspaces: { add(): void } } }).RED.workspaces.add());
      await expect.poll(active).not.toBe(example);
      const tab = await active();
      const chart = await user.locator('#red-ui-workspace-chart').boundingBox();
      if (chart === null) throw new Error('no workspace');
      /** Drags a node from the palette onto the workspace at (x, y); resolves with its id. */
      const drop = async (type: string, x: number, y: number): Promise<string> => {
        const source = user.locator(`.red-ui-palette-node[data-palette-type="${type}"]`);
        await source.scrollIntoViewIfNeeded();
        const box = await source.boundingBox();
        if (box === null) throw new Error(`${type} is not in the palette`);
        await user.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
        await user.mouse.down();
        await user.mouse.move(box.x + box.width / 2 + 30, box.y + box.height / 2, { steps: 5 });
        await user.mouse.move(chart.x + x, chart.y + y, { steps: 10 });
        await user.mouse.up();
        const ids = await user.evaluate(
          ([wanted, z]) => {
            const found: string[] = [];
            (globalThis as unknown as { RED: { nodes: { eachNode(each: (node: { id: string; type: string; z: string }) => void): void } } }).RED.nodes.eachNode((node) => {
              if (node.type === wanted && node.z === z) found.push(node.id);
            });
            return found;
          },
          [type, tab] as const,
        );
        if (ids.length !== 1) throw new Error(`dropping ${type} gave ${ids.length} nodes`);
        return ids[0] as string;
      };
      /** Drags a wire from an output port of one node to the input of another. */
      const wire = async (from: string, port: number, to: string): Promise<void> => {
        const out = await user.locator(`g.red-ui-flow-node-group[id="${from}"] g.red-ui-flow-port-output`).nth(port).boundingBox();
        const into = await user.locator(`g.red-ui-flow-node-group[id="${to}"] g.red-ui-flow-port-input`).boundingBox();
        if (out === null || into === null) throw new Error(`no port to wire ${from}:${port} to ${to}`);
        await user.mouse.move(out.x + out.width / 2, out.y + out.height / 2);
        await user.mouse.down();
        await user.mouse.move(into.x + into.width / 2, into.y + into.height / 2, { steps: 10 });
        await user.mouse.up();
      };
      /** Opens a node's dialog, fills it, and closes it with Done. */
      const edit = async (id: string, fill: () => Promise<void>): Promise<void> => {
        await user.locator(`g.red-ui-flow-node-group[id="${id}"] rect.red-ui-flow-node`).dblclick();
        await user.locator('#node-dialog-ok').waitFor();
        await fill();
        await user.click('#node-dialog-ok');
        await user.locator('#node-dialog-ok').waitFor({ state: 'detached' });
      };

      const button = await drop('inject', 150, 120);
      const agent = await drop('redflow-agent', 340, 120);
      const llm = await drop('redflow-model', 560, 40);
      const echo = await drop('redflow-tool-in', 560, 200);
      const echoOut = await drop('redflow-tool-out', 740, 200);
      const debug = await drop('debug', 560, 120);
      await wire(button, 0, agent);
      await wire(agent, 0, debug);
      await wire(agent, 1, llm);
      await wire(agent, 2, echo);
      await wire(echo, 0, echoOut);
      await edit(llm, async () => {
        await user.selectOption('#node-input-provider', 'openai-compatible');
        await user.fill('#node-input-model', 'local-model');
        await user.fill('#node-input-baseUrl', model.baseUrl);
        await user.fill('#node-input-apiKey', 'sk-typed-in-the-dialog');
      });
      await edit(echo, async () => {
        await user.fill('#node-input-name', 'echo');
        await user.fill('#node-input-description', 'returns its input');
      });
      model.enqueue(
        { kind: 'completion', content: JSON.stringify({ action: 'tool', tool: 'echo', input: { text: 'hi' }, confidence: 0.5 }) },
        { kind: 'completion', content: JSON.stringify({ action: 'final', message: 'the echo said hi', confidence: 0.9 }) },
      );

      await user.click('#red-ui-header-button-deploy');
      await expect.poll(() => user.getAttribute('#red-ui-header-button-deploy', 'class'), { timeout: 10_000 }).toContain('disabled');
      const flows = await readFile(path.join(userDir, 'flows.json'), 'utf8');
      expect(flows).toContain('redflow-agent');
      expect(flows).not.toContain('sk-typed-in-the-dialog');

      // The debug sidebar (its tab's button differs between Node-RED 4 and 5).
      await user.evaluate(() => (globalThis as unknown as { RED: { sidebar: { show(id: string): void } } }).RED.sidebar.show('debug'));
      await user.locator(`g.red-ui-flow-node-group[id="${button}"] rect.red-ui-flow-node-button-button`).click();
      const status = user.locator(`g.red-ui-flow-node-group[id="${agent}"] .red-ui-flow-node-status-label`);
      await expect.poll(() => status.textContent(), { timeout: 15_000 }).toBe('done · #2');
      await expect.poll(() => user.locator('.red-ui-debug-msg').allTextContents(), { timeout: 10_000 }).toEqual(expect.arrayContaining([expect.stringContaining('the echo said hi')]));
      expect(model.requests).toHaveLength(2);
      expect(model.requests[0]?.headers.authorization).toBe('Bearer sk-typed-in-the-dialog');
      await user.screenshot({ path: path.join(SCREENSHOTS, 'node-red-built-by-hand.png') });
    } finally {
      await user.close();
      await model.stop();
    }
  }, 60_000);
});
