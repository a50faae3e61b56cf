/**
 * The editor end to end, in headless Chromium (Debian's, never a downloaded one) against the real
 * `redflow serve` (the built CLI): build a flow by drag and drop, a refused connection, save and
 * reopen, a live run followed over SSE, an invalid model answer under Errors, a finished run
 * stepped through with the scrubber, the Stately inspector popup, and the agent's stop conditions
 * edited, saved and stopping a run. Screenshots of the main
 * screens go to artifacts/screenshots/.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, SKIP_BROWSER, openChromium, type FileBrowser, startServe } from './browserHarness.js';

const screenshots = SCREENSHOTS;
const skip = SKIP_BROWSER;

const FLOW_ID = 'e2e-agent';
/** The flow's nodes and edges (the statechart beside it is a React Flow too). */
const FLOW_NODES = '[data-testid="canvas"] .react-flow__node';
const FLOW_EDGES = '[data-testid="canvas"] .react-flow__edge';
const TOOL_WAIT_MS = 300;

const SLOW_TOOL = `// A tool.module tool for the editor's e2e test: echoes its text after ${TOOL_WAIT_MS} ms.
export default {
  name: 'slow_echo',
  description: 'Echoes its text, slowly',
  inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } }, additionalProperties: false },
  async execute({ text }, { signal }) {
    if (text === 'fail') throw new Error('asked to fail');
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ${TOOL_WAIT_MS});
      signal?.addEventListener('abort', () => { clearTimeout(timer); reject(new Error('aborted')); });
    });
    return { echoed: text };
  },
};
`;

const ANSWERS = [
  { action: 'tool', tool: 'module_tool', input: { text: 'one' }, confidence: 0.4 },
  { action: 'tool', tool: 'module_tool', input: { text: 'two' }, confidence: 0.7 },
  { action: 'final', message: 'Echoed twice.', confidence: 0.95 },
];

/** One tool call at confidence 0.7: with a confidence_threshold of 0.6 the run stops after it. */
const CONFIDENT_ANSWERS = [
  { action: 'tool', tool: 'module_tool', input: { text: 'sure?' }, confidence: 0.7 },
  { action: 'final', message: 'Not reached.', confidence: 0.9 },
];

/** A tool call that fails (the tool throws on "fail"), below the confidence threshold, then a final answer. */
const FAILING_TOOL_ANSWERS = [
  { action: 'tool', tool: 'module_tool', input: { text: 'fail' }, confidence: 0.3 },
  { action: 'final', message: 'The tool failed.', confidence: 0.9 },
];

let dir: string;
const servers: ChildProcess[] = [];
let url: string;
let browser: FileBrowser;
let page: Page;

async function startServer(flowsDir: string, runsDir: string, extra: readonly string[] = []): Promise<string> {
  return startServe(flowsDir, runsDir, (child) => servers.push(child), extra);
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(screenshots, `${name}.png`) });
}

async function center(locator: Locator): Promise<{ x: number; y: number }> {
  const box = await locator.boundingBox();
  if (!box) throw new Error('element not visible');
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Drags a palette item onto the canvas at (x, y) of the canvas (HTML5 drag and drop). */
async function drop(type: string, x: number, y: number): Promise<void> {
  await page.dragAndDrop(`[data-testid="palette-${type}"]`, '[data-testid="canvas"]', { targetPosition: { x, y } });
}

const handle = (nodeId: string, handleId: string) => page.locator(`${FLOW_NODES}[data-id="${nodeId}"] .react-flow__handle[data-handleid="${handleId}"]`);

/** Mouse down on a source handle, move, up on a target handle. */
async function connect(from: Locator, to: Locator): Promise<void> {
  const a = await center(from);
  const b = await center(to);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await page.mouse.move(b.x, b.y, { steps: 5 });
  await page.mouse.up();
}

async function setTextarea(field: string, value: string): Promise<void> {
  await page.locator(`[data-testid="field-${field}"] textarea, [data-testid="field-${field}"] input`).first().fill(value);
}

async function selectNode(id: string): Promise<void> {
  await page.locator(`${FLOW_NODES}[data-id="${id}"]`).click({ position: { x: 30, y: 12 } });
  await expect.poll(() => page.locator('[data-testid="node-config"], [data-testid="agent-panel"]').first().getAttribute('data-node-id')).toBe(id);
}

async function runToEnd(input: string): Promise<void> {
  await page.fill('[data-testid="run-input"]', input);
  await page.click('[data-testid="run-flow"]');
  await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 15_000 }).toBe('finished');
}

describe.skipIf(skip)('the editor, in Chromium, against redflow serve', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'redflow-editor-'));
    const flowsDir = path.join(dir, 'flows');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/slowEcho.mjs'), SLOW_TOOL);
    await mkdir(screenshots, { recursive: true });
    url = await startServer(flowsDir, path.join(dir, 'runs'));
    browser = await openChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    // No internet here: the inspector's page is a stub, the test only checks that the popup opens.
    await page.context().route('https://stately.ai/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>inspector</title>' }));
    await page.goto(url);
    await page.waitForSelector('[data-testid="palette"]');
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    for (const child of servers) child.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should build a flow by drag and drop and refuse an invalid connection with its reason', async () => {
    await drop('trigger.input', 110, 330);
    await drop('agent.core', 360, 330);
    await drop('model.llm', 640, 150);
    await drop('tool.module', 640, 540);
    await drop('response.chat', 660, 340);
    await expect.poll(() => page.locator(FLOW_NODES).count()).toBe(5);

    // trigger.input → model.llm is not an allowed edge: refused, naming the handle that fits, with the rule's message.
    await connect(handle('input', 'data'), handle('model', 'in'));
    await expect.poll(() => page.locator('[data-testid="connection-error"]').isVisible()).toBe(true);
    expect(await page.textContent('[data-testid="connection-error-code"]')).toBe('EDGE_NOT_ALLOWED');
    expect(await page.textContent('[data-testid="connection-error-message"]')).toBe("the input's right handle connects only to the agent core's left handle, not the model's bottom handle");
    expect(await page.textContent('[data-testid="connection-error-detail"]')).toContain('trigger.input cannot connect to model.llm');
    await shot('connection-refused');
    expect(await page.locator(FLOW_EDGES).count()).toBe(0);

    // Validation (POST /api/validate) lists what is missing and marks the nodes it is about.
    await page.click('[data-testid="validate-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="diagnostics"]', 'data-ok')).toBe('false');
    const codes = await page.locator('[data-testid="diagnostic"]').evaluateAll((items) => items.map((item) => item.getAttribute('data-code')));
    expect(codes).toContain('CAPABILITY_NOT_CONNECTED');
    await expect.poll(() => page.getAttribute('[data-testid="node-model"]', 'data-problem')).toBe('error');
    await shot('validation');

    await connect(handle('input', 'data'), handle('agent', 'in'));
    await connect(handle('agent', 'model'), handle('model', 'in'));
    await connect(handle('agent', 'tool'), handle('module_tool', 'in'));
    await connect(handle('agent', 'data'), handle('reply', 'in'));
    await expect.poll(() => page.locator(FLOW_EDGES).count()).toBe(4);

    // The tool's module and the model's scripted answers, through their forms.
    await selectNode('module_tool');
    await setTextarea('module', 'tools/slowEcho.mjs');
    await selectNode('model');
    await setTextarea('answers', JSON.stringify(ANSWERS));
    await expect.poll(() => page.textContent('[data-testid="config-status"]')).toBe('valid');
    // A scripted model's form has its answers only (no temperature): a field error shows on them.
    await setTextarea('answers', '{}');
    await expect.poll(() => page.locator('[data-testid="field-answers"] [data-testid="field-error"]').textContent()).toContain('must be array');
    await shot('model-config');
    await setTextarea('answers', JSON.stringify(ANSWERS));

    await selectNode('agent');
    await page.click('[data-testid="tab-button-tools"]');
    expect(await page.locator('[data-testid="connected-tool"]').count()).toBe(1);
    await page.fill('[data-testid="flow-id"]', FLOW_ID);
    await page.click('[data-testid="tab-button-general"]');
    await shot('editor-flow');
  });

  it('should save the flow and reopen it with the same nodes and edges', async () => {
    await page.click('[data-testid="save-flow"]');
    await expect.poll(() => page.getAttribute('[data-testid="diagnostics"]', 'data-ok')).toBe('true');
    await expect.poll(() => page.locator(`[data-testid="flow-select"] option[value="${FLOW_ID}"]`).count()).toBe(1);

    await page.reload();
    await page.waitForSelector(`[data-testid="flow-select"] option[value="${FLOW_ID}"]`, { state: 'attached' });
    expect(await page.locator(FLOW_NODES).count()).toBe(0);
    await page.selectOption('[data-testid="flow-select"]', FLOW_ID);
    await expect.poll(() => page.locator(FLOW_NODES).count()).toBe(5);
    const ids = await page.locator(FLOW_NODES).evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-id')).sort());
    expect(ids).toEqual(['agent', 'input', 'model', 'module_tool', 'reply']);
    await expect.poll(() => page.locator(FLOW_EDGES).count()).toBe(4);
    const edges = await page.locator(FLOW_EDGES).evaluateAll((list) => list.map((e) => e.getAttribute('data-id')).sort());
    expect(edges).toEqual(['e_agent_model', 'e_agent_module_tool', 'e_agent_reply', 'e_input_agent']);
    expect(await page.inputValue('[data-testid="flow-id"]')).toBe(FLOW_ID);
  });

  it('should follow a run live: the timeline grows one iteration at a time and the active node is highlighted', async () => {
    // The flow was opened and not changed: running it must not rewrite its file.
    const flowFile = path.join(dir, 'flows', `${FLOW_ID}.json`);
    const savedAt = (await stat(flowFile)).mtimeMs;
    await page.fill('[data-testid="run-input"]', 'echo please');
    await page.click('[data-testid="run-flow"]');
    const counts: number[] = [];
    const activeTools = new Set<string>();
    let captured = false;
    for (let i = 0; i < 200; i++) {
      const state = await page.getAttribute('[data-testid="editor"]', 'data-run-state');
      counts.push(await page.locator('[data-testid="timeline-row"]').count());
      if ((await page.getAttribute('[data-testid="node-module_tool"]', 'data-activity')) === 'active') activeTools.add('module_tool');
      if (!captured && counts.at(-1) === 2) {
        captured = true;
        await shot('live-run');
      }
      if (state === 'finished') break;
      await page.waitForTimeout(40);
    }
    expect(await page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('finished');
    // Each iteration arrived on its own: the row count went through 1 and 2 before the final 3.
    const seen = [...new Set(counts)];
    expect(seen).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(seen.indexOf(1)).toBeLessThan(seen.indexOf(2));
    expect(seen.indexOf(2)).toBeLessThan(seen.indexOf(3));
    expect(activeTools.has('module_tool')).toBe(true);
    expect(await page.textContent('[data-testid="run-outcome"]')).toContain('done');
    expect(await page.textContent('[data-testid="run-answer"]')).toBe('Echoed twice.');
    expect(await page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('done');
    const actions = await page.locator('[data-testid="timeline-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    expect(actions).toEqual(['tool', 'tool', 'final']);
    expect((await stat(flowFile)).mtimeMs).toBe(savedAt);
  });

  it('should show INVALID_JSON under Errors when the model answers "not json"', async () => {
    await selectNode('model');
    await setTextarea('answers', JSON.stringify(['not json']));
    await selectNode('agent');
    await runToEnd('this one fails');
    await page.click('[data-testid="tab-button-errors"]');
    await expect.poll(() => page.locator('[data-testid="run-error"]').first().getAttribute('data-code')).toBe('INVALID_JSON');
    expect(await page.getAttribute('[data-testid="watched-INVALID_JSON"]', 'class')).toContain('is-seen');
    expect(await page.getAttribute('[data-testid="node-agent"]', 'data-activity')).toBe('failed');
    expect(await page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('error');
    await shot('errors-tab');
  });

  it('should step through a finished run from the runs list with the scrubber', async () => {
    await page.click('[data-testid="runs-refresh"]');
    await expect.poll(() => page.locator('[data-testid="run-row"]').count()).toBe(2);
    // Newest first: the second row is the three-iteration run.
    await page.locator('[data-testid="run-row"]').nth(1).click();
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state')).toBe('replay');
    await page.click('[data-testid="tab-button-runtime"]');
    await expect.poll(() => page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('done');
    expect(await page.locator('[data-testid="timeline-row"]').count()).toBe(3);

    const scrubber = page.locator('[data-testid="scrubber"]');
    const max = Number(await scrubber.getAttribute('max'));
    expect(max).toBeGreaterThan(5);
    await scrubber.fill('1');
    await expect.poll(() => page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('awaitingModel');
    await expect.poll(() => page.getAttribute('[data-testid="statechart-state-awaitingModel"]', 'data-current')).toBe('true');
    expect(await page.getAttribute('[data-testid="statechart-state-done"]', 'data-current')).toBe('false');
    expect(await page.getAttribute('[data-testid="node-model"]', 'data-activity')).toBe('active');
    // At that point the first model call is under way: its row is marked so.
    expect(await page.locator('[data-testid="timeline-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-in-progress')))).toEqual(['model']);

    await page.click('[data-testid="scrub-next"]');
    await page.click('[data-testid="scrub-next"]');
    await expect.poll(() => page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('awaitingTool');
    await expect.poll(() => page.getAttribute('[data-testid="statechart-state-awaitingTool"]', 'data-current')).toBe('true');
    expect(await page.getAttribute('[data-testid="node-module_tool"]', 'data-activity')).toBe('active');
    expect(await page.locator('[data-testid="timeline-row"]').count()).toBe(1);
    await shot('scrubber');

    // The button says it opens a hosted page (no internet: a blank popup) and where else to look.
    expect(await page.getAttribute('[data-testid="open-inspector"]', 'title')).toContain('a hosted page (stately.ai) in a popup, so it needs internet access');
    const popupOpened = page.waitForEvent('popup');
    await page.click('[data-testid="open-inspector"]');
    const popup = await popupOpened;
    expect(popup.url()).toContain('stately.ai/inspect');
    // A page left in the background gets no animation frames: close the popup, back to the editor.
    await popup.close();
    await page.bringToFront();
  });

  it('should edit the agent’s stop conditions, save them, and end a run done_partial on the confidence threshold', async () => {
    await selectNode('model');
    await setTextarea('answers', JSON.stringify(CONFIDENT_ANSWERS));
    await selectNode('agent');
    await page.click('[data-testid="tab-button-general"]');
    const row = page.locator('[data-testid="stop-condition-confidence_threshold"]');
    const value = page.locator('[data-testid="stop-condition-confidence_threshold-value"]');
    const rowErrors = row.locator('[data-testid="stop-condition-error"]');
    expect(await row.getAttribute('data-enabled')).toBe('false');
    expect(await value.isDisabled()).toBe(true);
    expect(await page.locator('[data-testid^="stop-condition-"][data-enabled]').count()).toBe(3);

    await page.click('[data-testid="stop-condition-confidence_threshold-toggle"]');
    await expect.poll(() => row.getAttribute('data-enabled')).toBe('true');
    // Out of range: the error is next to the row, the others have none, and the config is invalid.
    await value.fill('1.5');
    await expect.poll(() => rowErrors.textContent()).toBe('confidence_threshold needs a number value from 0 to 1, got 1.5');
    expect(await page.locator('[data-testid="stop-condition-error"]').count()).toBe(1);
    expect(await page.textContent('[data-testid="config-status"]')).toBe('1 problem');
    await shot('stop-conditions');

    await value.fill('0.6');
    await expect.poll(() => rowErrors.count()).toBe(0);
    expect(await page.textContent('[data-testid="config-status"]')).toBe('valid');
    await page.click('[data-testid="save-flow"]');
    const flowFile = path.join(dir, 'flows', `${FLOW_ID}.json`);
    const savedAgent = async () => {
      const flow = JSON.parse(await readFile(flowFile, 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
      return flow.nodes.find((node) => node.id === 'agent')?.config;
    };
    await expect.poll(async () => (await savedAgent())?.stopConditions).toEqual([{ type: 'confidence_threshold', value: 0.6 }]);
    await expect.poll(() => page.getAttribute('[data-testid="diagnostics"]', 'data-ok')).toBe('true');

    // The model's one tool call comes at confidence 0.7 ≥ 0.6: the run stops after it, done_partial.
    await runToEnd('stop when sure');
    await expect.poll(() => page.locator('[data-testid="tab-runtime"] [data-testid="run-outcome"]').textContent()).toBe('done_partial confidence_threshold');
    // The answer is what the run has (the tool's output); why it stopped is beside it.
    expect(await page.textContent('[data-testid="run-answer"]')).toBe('module_tool: {"echoed":"sure?"}');
    expect(await page.textContent('[data-testid="run-detail"]')).toBe('stopped after a tool call: its confidence 0.7 reached the confidence_threshold 0.6');
    const actions = await page.locator('[data-testid="timeline-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    expect(actions).toEqual(['tool']);
    expect(await page.getAttribute('[data-testid="statechart"]', 'data-current-state')).toBe('done');
  });

  it('should mark the timeline row of a failed tool call with ✖ and its code, and leave the others unmarked', async () => {
    await selectNode('model');
    await setTextarea('answers', JSON.stringify(FAILING_TOOL_ANSWERS));
    await selectNode('agent');
    await runToEnd('this tool fails');
    const rows = page.locator('[data-testid="timeline-row"]');
    await expect.poll(() => rows.evaluateAll((all) => all.map((r) => r.getAttribute('data-action')))).toEqual(['tool', 'final']);
    expect(await rows.evaluateAll((all) => all.map((r) => r.getAttribute('data-failed')))).toEqual(['true', null]);
    expect(await rows.first().locator('.timeline__code').textContent()).toBe('✖ TOOL_FAILED');
    expect(await rows.nth(1).locator('.timeline__code').count()).toBe(0);
  });

  it('should ask for the token of a server that wants one, and abort a run under way', async () => {
    const flowsDir = path.join(dir, 'guarded');
    await mkdir(path.join(flowsDir, 'tools'), { recursive: true });
    await writeFile(path.join(flowsDir, 'tools/slowEcho.mjs'), SLOW_TOOL);
    const loops = Array.from({ length: 5 }, (_, i) => ({ action: 'tool', tool: 'echo', input: { text: `${i}` }, confidence: 0.5 }));
    const flow = {
      nodes: [
        { id: 'agent', type: 'agent.core', position: { x: 0, y: 0 }, config: { strategy: 'react', maxIterations: 5 } },
        { id: 'llm', type: 'model.llm', position: { x: 0, y: -150 }, config: { provider: 'scripted', answers: loops } },
        { id: 'echo', type: 'tool.module', position: { x: 0, y: 150 }, config: { module: 'tools/slowEcho.mjs' } },
      ],
      edges: [
        { id: 'e1', source: 'agent', target: 'llm' },
        { id: 'e2', source: 'agent', target: 'echo' },
      ],
    };
    await writeFile(path.join(flowsDir, 'slow.json'), JSON.stringify(flow));
    const guarded = await startServer(flowsDir, path.join(dir, 'guarded-runs'), ['--token', 's3cret']);
    await page.goto(guarded);
    await page.waitForSelector('[data-testid="token-prompt"]');
    await page.fill('[data-testid="token-input"]', 's3cret');
    await page.click('[data-testid="token-submit"]');
    await page.waitForSelector('[data-testid="flow-select"] option[value="slow"]', { state: 'attached' });
    expect(await page.evaluate(() => sessionStorage.getItem('redflow.token'))).toBe('s3cret');
    await page.selectOption('[data-testid="flow-select"]', 'slow');
    await expect.poll(() => page.locator(FLOW_NODES).count()).toBe(3);

    // The stream takes the token as ?token=: the live timeline shows the first iteration, then Abort.
    await page.fill('[data-testid="run-input"]', 'go');
    await page.click('[data-testid="run-flow"]');
    await expect.poll(() => page.locator('[data-testid="timeline-row"]').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await page.click('[data-testid="abort-run"]');
    await expect.poll(() => page.getAttribute('[data-testid="editor"]', 'data-run-state'), { timeout: 10_000 }).toBe('finished');
    await page.click('[data-testid="tab-button-errors"]');
    await expect.poll(() => page.locator('[data-testid="run-error"]').last().getAttribute('data-code')).toBe('RUN_ABORTED');
    expect(await page.locator('[data-testid="timeline-row"]').count()).toBe(0); // the Errors tab is shown
  });
});
