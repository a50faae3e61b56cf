import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../src/contracts/schema-types.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { encodeJsonlLog, readJsonlLog } from '../../src/events/jsonlEventStore.js';
import type { NodeRedMessage, NodeRedNodeConfig } from '../../src/nodeRed/nodeRedApi.js';
import { helper, loadFlow, nextMessage, onTab, takePending, withUserDir } from './nodeRedHarness.js';

const answers = [
  { action: 'tool', tool: 'lookup', input: { id: 'A-1' }, confidence: 0.5 },
  { action: 'final', message: 'A-1 has shipped', confidence: 0.9 },
];

/** An agent whose tool `lookup` has a body the test plays: its message reaches node `body`, the test answers through `lookup-out`. */
const flow: NodeRedNodeConfig[] = [
  { id: 'agent', type: 'redflow-agent', strategy: 'react', maxIterations: 3, wires: [['answer'], ['model'], ['lookup'], []] },
  { id: 'model', type: 'redflow-model', provider: 'scripted', answers, wires: [] },
  {
    id: 'lookup',
    type: 'redflow-tool-in',
    name: 'lookup',
    description: 'an order by id',
    inputSchema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
    wires: [['body']],
  },
  // Capture nodes: an agent resumes its runs as it starts, maybe before the test listens.
  { id: 'body', type: 'capture' },
  { id: 'lookup-out', type: 'redflow-tool-out', wires: [] },
  { id: 'answer', type: 'capture' },
];

/** Counts the tool body's calls and answers each with the order's status. */
function playToolBody(): { calls: NodeRedMessage[] } {
  const calls: NodeRedMessage[] = [];
  const body = helper.getNode('body');
  const answer = (msg: NodeRedMessage) => {
    calls.push(structuredClone(msg));
    msg.payload = { id: (msg.payload as { id: string }).id, status: 'shipped' };
    helper.getNode('lookup-out')?.receive(msg);
  };
  // What reached the body before the test played it first, then what comes.
  for (let kept = takePending(body); kept !== undefined; kept = takePending(body)) answer(kept);
  body?.on('input', ((msg: NodeRedMessage) => answer(takePending(body) ?? msg)) as (...args: never[]) => void);
  return { calls };
}

describe('an agent node that starts with unfinished runs', () => {
  let userDir: string;
  let remove: () => Promise<void>;
  beforeEach(async () => ({ userDir, remove } = await withUserDir()));
  afterEach(async () => {
    await helper.unload();
    await remove();
  });

  /** One whole run's log, made by the agent itself. */
  async function wholeRun(): Promise<{ events: readonly AgentEvent[]; logPath: string }> {
    await loadFlow(userDir, flow);
    playToolBody();
    const answered = nextMessage('answer');
    helper.getNode('agent')?.receive({ payload: 'where is A-1?' });
    const { logPath } = (await answered).redflow as { logPath: string };
    await helper.unload();
    const { events } = await readJsonlLog(logPath);
    return { events, logPath };
  }

  it.each([
    ['run.started', 1],
    ['model.requested', 1],
    ['model.answered', 1],
    ['tool.requested', 1],
    ['tool.completed', 0],
    ['model.requested of iteration 2', 0],
    ['model.answered of iteration 2', 0],
  ])('continues a run whose log stops after %s once, making the tool call %i more time(s)', async (last, toolCalls) => {
    const { events, logPath } = await wholeRun();
    const [type, , , iteration] = last.split(' ');
    const cut = events.findIndex((event) => event.type === type && event.iteration === Number(iteration ?? events.find((e) => e.type === type)?.iteration)) + 1;
    // The process died there: the log holds what it had recorded, and its lock names a dead process.
    await writeFile(logPath, encodeJsonlLog(events.slice(0, cut)));
    await writeFile(`${logPath}.lock`, '999999999\n');

    await loadFlow(userDir, flow);
    const { calls } = playToolBody();
    const msg = await nextMessage('answer');
    const redflow = msg.redflow as { traceId: string; outcome: RunOutcome; resumed?: boolean; logPath: string };
    expect(redflow).toMatchObject({ traceId: events[0]?.traceId, resumed: true, logPath, outcome: { status: 'done', answer: 'A-1 has shipped' } });
    expect(msg.payload).toBe('A-1 has shipped');
    expect(calls).toHaveLength(toolCalls);
    // A call sent again carries the key of the first.
    for (const call of calls) expect(call.redflow).toMatchObject({ tool: 'lookup', idempotencyKey: `${redflow.traceId}:1` });

    const after = await readJsonlLog(logPath);
    expect(after.problems).toEqual([]);
    expect(after.events.filter((event) => event.type === 'run.completed' || event.type === 'run.failed')).toHaveLength(1);
    expect(after.events.map((event) => event.type)).toContain('run.resumed');
    expect(after.events.filter((event) => event.type === 'tool.completed')).toHaveLength(1);
  });

  it('finishes a resumed run once: starting again later resumes nothing', async () => {
    const { events, logPath } = await wholeRun();
    await writeFile(logPath, encodeJsonlLog(events.slice(0, events.findIndex((event) => event.type === 'tool.requested') + 1)));
    await loadFlow(userDir, flow);
    playToolBody();
    await nextMessage('answer');
    await helper.unload();
    const finished = await readFile(logPath, 'utf8');

    await loadFlow(userDir, flow);
    const { calls } = playToolBody();
    await expect(nextMessage('answer', 500)).rejects.toThrow(/no message/);
    expect(calls).toHaveLength(0);
    expect(await readFile(logPath, 'utf8')).toBe(finished);
  });

  it('cuts off a torn last record before it continues', async () => {
    const { events, logPath } = await wholeRun();
    const cut = events.findIndex((event) => event.type === 'tool.completed');
    await writeFile(logPath, `${encodeJsonlLog(events.slice(0, cut))}0123abcd {"id":"torn`);
    await loadFlow(userDir, flow);
    playToolBody();
    const msg = await nextMessage('answer');
    expect((msg.redflow as { outcome: RunOutcome }).outcome.status).toBe('done');
    expect((await readJsonlLog(logPath)).problems).toEqual([]);
  });

  it('leaves a damaged log alone and says why', async () => {
    const { events, logPath } = await wholeRun();
    const lines = encodeJsonlLog(events.slice(0, 4)).split('\n');
    lines[1] = lines[1]?.replace('model.requested', 'model.requestex') ?? '';
    const damaged = lines.join('\n');
    await writeFile(logPath, damaged);
    helper.settings({ userDir, redflow: { fsync: 'never' } });
    const loaded = helper.load((await import('./nodeRedHarness.js')).redflowNodes, onTab(flow));
    await loaded;
    const agent = helper.getNode('agent') as unknown as { error: { args: unknown[][] } };
    await expect.poll(() => agent.error.args.map(String).join('\n')).toContain('LOG_RECORD_CORRUPT');
    expect(await readFile(logPath, 'utf8')).toBe(damaged);
  });

  it('stops its runs on a redeploy and continues them after it, sending a tool call cut short again with the same key', async () => {
    await mkdir(path.join(userDir, 'redflow'), { recursive: true });
    await loadFlow(userDir, flow, {}, { closeGraceMs: 50 });
    const held: NodeRedMessage[] = [];
    helper.getNode('body')?.on('input', (msg: NodeRedMessage) => held.push(structuredClone(msg)));
    helper.getNode('agent')?.receive({ payload: 'where is A-1?' });
    await expect.poll(() => held.length).toBe(1);

    // A full deploy: every node closes and starts again; the body never answered.
    await helper.setFlows(onTab(flow));
    const { calls } = playToolBody();
    const msg = await nextMessage('answer');
    const redflow = msg.redflow as { traceId: string; resumed?: boolean; logPath: string };
    expect(redflow.resumed).toBe(true);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.redflow).toMatchObject({ idempotencyKey: held[0] && (held[0].redflow as { idempotencyKey: string }).idempotencyKey });
    const { events } = await readJsonlLog(redflow.logPath);
    expect(events.filter((event) => event.type === 'run.completed')).toHaveLength(1);
  });

  it('lets a tool call under way finish before a redeploy stops the run, so the call is not made twice', async () => {
    // An http tool whose API answers after 300 ms: its call goes on while the nodes restart.
    const requests: string[] = [];
    const api = createServer((req, res) => {
      requests.push(String(req.headers['idempotency-key']));
      setTimeout(() => res.end(JSON.stringify({ id: 'A-1', status: 'shipped' })), 300);
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const port = (api.address() as AddressInfo).port;
      const httpFlow = flow.map((node) =>
        node.id === 'lookup' ? { ...node, type: 'redflow-tool-http', url: `http://127.0.0.1:${port}/orders/{id}`, wires: [] } : node,
      );
      await loadFlow(userDir, httpFlow, {}, { closeGraceMs: 5_000 });
      helper.getNode('agent')?.receive({ payload: 'where is A-1?' });
      await expect.poll(() => requests.length).toBe(1);
      await helper.setFlows(onTab(httpFlow));
      const msg = await nextMessage('answer');
      expect(msg.redflow).toMatchObject({ resumed: true, outcome: { status: 'done' } });
      expect(requests).toHaveLength(1);
      const { events } = await readJsonlLog((msg.redflow as { logPath: string }).logPath);
      expect(events.filter((event) => event.type === 'tool.completed')).toMatchObject([{ data: { ok: true } }]);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('aborts its runs when the agent is deleted', async () => {
    await loadFlow(userDir, flow);
    const held: NodeRedMessage[] = [];
    helper.getNode('body')?.on('input', (msg: NodeRedMessage) => held.push(msg));
    helper.getNode('agent')?.receive({ payload: 'where is A-1?' });
    await expect.poll(() => held.length).toBe(1);
    const runsDir = path.join(userDir, 'redflow', 'runs', 'agent');
    // A deploy without the agent (and its capabilities).
    await helper.setFlows(onTab(flow.filter((node) => node.id === 'answer')));
    const [log] = await readdir(runsDir);
    const { events } = await readJsonlLog(path.join(runsDir, log ?? ''));
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', data: { outcome: { status: 'blocked', reason: 'aborted' } } });
  });
});
