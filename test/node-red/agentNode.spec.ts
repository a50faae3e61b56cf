import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../src/contracts/schema-types.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import type { NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { echoFlow, errorsOf, helper, loadFlow, nextMessage, onTab, statuses, toolThenFinal, withUserDir } from './nodeRedHarness.js';

describe('the redflow agent node', () => {
  let userDir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => ({ userDir, remove } = await withUserDir()));
  afterEach(async () => {
    await helper.unload();
    await remove();
  });

  it('runs its input through the statechart and sends the answer with the outcome and envelope on its first output', async () => {
    await loadFlow(userDir, echoFlow(toolThenFinal));
    const shown = statuses('agent');
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'say hi' });
    const msg = await answered;

    expect(msg.payload).toBe('the echo said hi');
    const redflow = msg.redflow as { traceId: string; outcome: RunOutcome; envelope: { input: unknown; tools: { history: { output?: unknown }[] } }; logPath: string };
    expect(redflow.outcome).toMatchObject({ status: 'done', reason: 'final_answer' });
    expect(redflow.envelope.input).toBe('say hi');
    expect(redflow.envelope.tools.history[0]?.output).toEqual({ text: 'hi' });
    expect(shown.texts).toEqual(expect.arrayContaining(['awaitingModel · #1', 'awaitingTool · #1 echo', 'awaitingModel · #2', 'done · #2']));

    // The log is the embedded runs' JSONL, under the user directory, one file per run.
    expect(redflow.logPath).toBe(path.join(userDir, 'redflow', 'runs', 'agent', `${redflow.traceId}.jsonl`));
    const { events, problems } = await readJsonlLog(redflow.logPath);
    expect(problems).toEqual([]);
    expect(events.map((event) => event.type)).toEqual([
      'run.started',
      'model.requested',
      'model.answered',
      'tool.requested',
      'tool.completed',
      'model.requested',
      'model.answered',
      'run.completed',
    ]);
    expect(events[0]?.data).toMatchObject({ input: 'say hi', flow: { id: 'agent' } });
  });

  it('reports a blocked run to Catch nodes, and still sends its outcome', async () => {
    await loadFlow(userDir, echoFlow(['this is not JSON']));
    const errors = errorsOf('agent');
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'hello' });
    const msg = await answered;
    expect((msg.redflow as { outcome: RunOutcome }).outcome).toMatchObject({ status: 'blocked', reason: 'invalid_answer', error: { code: 'INVALID_JSON' } });
    await expect.poll(() => errors.join('\n')).toContain('INVALID_JSON');
  });

  it.each([
    ['no model wired', { wires: [['answer'], [], ['echo'], []] }, 'NO_MODEL'],
    ['the model wired to the tools output', { wires: [['answer'], [], ['echo', 'model'], []] }, 'EDGE_KIND_MISMATCH'],
    ['a tool wired to the model output', { wires: [['answer'], ['model', 'echo'], [], []] }, 'EDGE_KIND_MISMATCH'],
    ['a debug-like node on the model output', { wires: [['answer'], ['model', 'answer'], ['echo'], []] }, 'EDGE_NOT_ALLOWED'],
    ['maxIterations out of range', { maxIterations: 50 }, 'NODE_CONFIG_INVALID'],
    ['an allowed tool that is not wired', { allowedTools: ['echo', 'missing'] }, 'ALLOWED_TOOL_NOT_CONNECTED'],
  ])('shows a red status with the flow validation code when its wiring is wrong: %s', async (_what, agent, code) => {
    await loadFlow(userDir, echoFlow(toolThenFinal, agent));
    // The status was set when the node started, before a listener could attach: the spy has it.
    const node = helper.getNode('agent') as unknown as { status: { args: [{ fill?: string; text?: string }][] } };
    const shown = node.status.args.map(([status]) => status).find((status) => status.fill === 'red');
    expect(shown?.text).toMatch(new RegExp(`^${code}: `));
    const errors = errorsOf('agent');
    helper.getNode('agent')?.receive({ payload: 'hello' });
    await expect.poll(() => errors.join('\n')).toContain(code);
    expect(existsSync(path.join(userDir, 'redflow', 'runs', 'agent'))).toBe(false);
  });

  it('names nodes by their names in its messages, not by their ids', async () => {
    await loadFlow(userDir, echoFlow(toolThenFinal, { wires: [['answer'], [], ['echo'], []] }));
    const node = helper.getNode('agent') as unknown as { status: { args: [{ text?: string }][] } };
    expect(node.status.args.map(([status]) => status.text).join()).toContain("agent.core 'Support agent' has no model");
  });

  it('refuses an input past the limits, or none, before it records anything', async () => {
    await loadFlow(userDir, echoFlow(toolThenFinal));
    const errors = errorsOf('agent');
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i += 1) deep = [deep];
    helper.getNode('agent')?.receive({ payload: deep });
    await expect.poll(() => errors.join('\n')).toContain('RUN_INPUT_TOO_DEEP');
    helper.getNode('agent')?.receive({});
    await expect.poll(() => errors.join('\n')).toContain('RUN_INPUT_INVALID: msg.payload is missing');
    expect(existsSync(path.join(userDir, 'redflow', 'runs', 'agent'))).toBe(false);
  });

  it('leaves no empty log behind when a run fails before its first event', async () => {
    const flow = echoFlow(toolThenFinal, { wires: [['answer'], ['model'], ['echo'], ['memory']] });
    flow.push({ id: 'memory', type: 'redflow-memory', store: 'file', path: 'memory', wires: [] });
    await loadFlow(userDir, flow);
    // A stored conversation too deep to load: the run stops before it records anything.
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i += 1) deep = [deep];
    await mkdir(path.join(userDir, 'memory'), { recursive: true });
    await writeFile(path.join(userDir, 'memory', 'c-1.json'), JSON.stringify({ turns: [], deep }));
    const errors = errorsOf('agent');
    helper.getNode('agent')?.receive({ payload: 'hi', conversationId: 'c-1' });
    await expect.poll(() => errors.join('\n')).toContain('MEMORY_RECORD_TOO_DEEP');
    await expect.poll(() => readdir(path.join(userDir, 'redflow', 'runs', 'agent'))).toEqual([]);
  });

  it('keeps its logs in the folder settings.js names (redflow.runsDir)', async () => {
    const runsDir = path.join(userDir, 'elsewhere');
    await loadFlow(userDir, echoFlow(toolThenFinal), {}, { runsDir });
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'say hi' });
    const { logPath, traceId } = (await answered).redflow as { logPath: string; traceId: string };
    expect(logPath).toBe(path.join(runsDir, 'agent', `${traceId}.jsonl`));
  });

  it('runs a module tool from the user directory, and refuses one outside it with FLOW_FILE_OUTSIDE_ROOTS', async () => {
    await writeFile(
      path.join(userDir, 'shout.mjs'),
      "export default { name: 'shout', description: 'upper case', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, execute: ({ text }) => ({ shouted: text.toUpperCase() }) };\n",
    );
    const moduleFlow = (module: string): NodeRedNodeConfig[] => [
      { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['shout'], []] },
      {
        id: 'model',
        type: 'redflow-model',
        provider: 'scripted',
        answers: [{ action: 'tool', tool: 'shout', input: { text: 'hi' }, confidence: 0.5 }, { action: 'final', message: 'shouted', confidence: 0.9 }],
        wires: [],
      },
      { id: 'shout', type: 'redflow-tool-module', module, wires: [] },
      { id: 'answer', type: 'helper' },
    ];
    await loadFlow(userDir, moduleFlow('shout.mjs'));
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'go' });
    const { envelope } = (await answered).redflow as { envelope: { tools: { history: { output?: unknown }[] } } };
    expect(envelope.tools.history[0]?.output).toEqual({ shouted: 'HI' });
    await helper.unload();

    await loadFlow(userDir, moduleFlow('../outside.mjs'));
    const errors = errorsOf('agent');
    helper.getNode('agent')?.receive({ payload: 'go' });
    await expect.poll(() => errors.join('\n')).toContain('FLOW_FILE_OUTSIDE_ROOTS');
  });

  it("shows a tool's progress reports in its status while the call runs", async () => {
    await writeFile(
      path.join(userDir, 'crawl.mjs'),
      "export default { name: 'crawl', description: 'crawls', inputSchema: { type: 'object' }, execute: (_input, context) => { context.progress?.({ progress: 2, total: 5, message: 'page 2' }); return { pages: 5 }; } };\n",
    );
    await loadFlow(userDir, [
      { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['crawl'], []] },
      { id: 'model', type: 'redflow-model', provider: 'scripted', answers: [{ action: 'tool', tool: 'crawl', input: {}, confidence: 0.5 }, { action: 'final', message: 'crawled', confidence: 0.9 }], wires: [] },
      { id: 'crawl', type: 'redflow-tool-module', module: 'crawl.mjs', wires: [] },
      { id: 'answer', type: 'helper' },
    ]);
    const shown = statuses('agent');
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'go' });
    expect((await answered).payload).toBe('crawled');
    expect(shown.texts).toEqual(expect.arrayContaining(['awaitingTool · #1 crawl', 'awaitingTool · #1 crawl: 40% page 2', 'done · #2']));
  });

  it('gives its new runs a changed model after a deploy of the modified nodes only, which leaves the agent running', async () => {
    const first = echoFlow([{ action: 'final', message: 'from the first model', confidence: 0.9 }]);
    await loadFlow(userDir, first);
    const agent = helper.getNode('agent');
    let answered = nextMessage('answer');
    agent?.receive({ payload: 'hi' });
    expect((await answered).payload).toBe('from the first model');

    const second = first.map((node) => (node.id === 'model' ? { ...node, answers: [{ action: 'final', message: 'from the second model', confidence: 0.9 }] } : node));
    await helper.setFlows(onTab(second), 'nodes');
    expect(helper.getNode('agent')).toBe(agent);
    answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'hi again' });
    expect((await answered).payload).toBe('from the second model');
  });
});
