import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { fold } from '../../src/events/evolve.js';
import { encodeJsonlLog, readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { resumeFromLog, runFlowFile } from '../../src/host/embeddedFlowRun.js';

/**
 * Subagents in embedded mode: a parent flow whose agent.ref runs a child flow in the same process,
 * with its own JSONL log beside the parent's, both with scripted models.
 */

let dir: string;
let runs: string;

/** A tool that appends its idempotency key to the file `counter.txt` next to it: its effects, counted. */
const BUMP = `import { appendFileSync } from 'node:fs';
export default {
  name: 'bump', description: 'counts', inputSchema: { type: 'object' },
  execute(input, context) { appendFileSync(new URL('./counter.txt', import.meta.url), context.idempotencyKey + '\\n'); return { bumped: true }; },
};`;

/** A tool that never answers until its call is aborted: a subagent that is still working. */
const HANG = `export default {
  name: 'hang', description: 'waits', inputSchema: { type: 'object' },
  execute(input, { signal }) { return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))); },
};`;

interface FlowSpec {
  readonly answers: readonly unknown[];
  readonly subagents?: Record<string, Record<string, unknown>>;
  readonly tools?: Record<string, string>;
  readonly agent?: Record<string, unknown>;
}

/** Writes a flow (and its tool modules, next to it) into `folder` of the test's directory. */
async function flow(folder: string, spec: FlowSpec): Promise<string> {
  const base = path.join(dir, folder);
  await mkdir(base, { recursive: true });
  const subagents = Object.entries(spec.subagents ?? {});
  const tools = Object.entries(spec.tools ?? {});
  for (const [name, source] of tools) await writeFile(path.join(base, `${name}.mjs`), source);
  const capabilities = [
    ...subagents.map(([name, config]) => ({ id: name, type: 'agent.ref', config })),
    ...tools.map(([name]) => ({ id: name, type: 'tool.module', config: { module: `${name}.mjs` } })),
  ];
  const file = path.join(base, 'flow.json');
  await writeFile(
    file,
    JSON.stringify({
      id: folder,
      nodes: [
        { id: 'in', type: 'trigger.input' },
        { id: 'agent', type: 'agent.core', config: { strategy: 'react', maxIterations: 5, ...spec.agent } },
        { id: 'model', type: 'model.llm', config: { provider: 'scripted', answers: spec.answers } },
        ...capabilities,
      ],
      edges: [
        { id: 'e-in', source: 'in', target: 'agent' },
        { id: 'e-model', source: 'agent', target: 'model' },
        ...capabilities.map((node) => ({ id: `e-${node.id}`, source: 'agent', target: node.id })),
      ],
    }),
  );
  return file;
}

const tool = (name: string, input: unknown, confidence = 0.5) => ({ action: 'tool', tool: name, input, confidence });
const final = (message: string) => ({ action: 'final', message, confidence: 0.9 });
const delegate = (agentId: string, task: string) => ({ action: 'delegate', input: { agent_id: agentId, task } });

async function events(traceId: string): Promise<AgentEvent[]> {
  const read = await readJsonlLog(path.join(runs, `${traceId}.jsonl`));
  expect(read.problems).toEqual([]);
  return [...read.events];
}

async function counted(folder: string): Promise<string[]> {
  return (await readFile(path.join(dir, folder, 'counter.txt'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

async function run(flowPath: string, traceId: string, more: Partial<Parameters<typeof runFlowFile>[0]> = {}) {
  const started = await runFlowFile({ flowPath, input: 'go', traceId, logPath: path.join(runs, `${traceId}.jsonl`), fsync: 'never', ...more });
  return started.finished();
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-subagents-'));
  runs = path.join(dir, 'runs');
  await flow('parent/counter', { answers: [tool('bump', {}), tool('bump', {}), final('counted to two')], tools: { bump: BUMP }, agent: { allowedTools: ['bump'] } });
  await flow('parent', {
    answers: [tool('counter', { task: 'count' }, 0.4), delegate('counter', 'count again'), final('the counter counted, twice')],
    subagents: { counter: { flow: 'counter/flow.json', description: 'counts' } },
  });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a subagent called like a tool (embedded)', () => {
  it('runs the child flow once per call, as a tool call or a delegation, each run logged on its own and linked both ways', async () => {
    const result = await run(path.join(dir, 'parent/flow.json'), 'p');
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'the counter counted, twice' });
    const parent = await events('p');
    const requested = parent.filter((event) => event.type === 'tool.requested');
    const completed = parent.filter((event) => event.type === 'tool.completed');
    // The delegation went to the connected subagent as a call of it, with its task.
    expect(requested.map((event) => event.data)).toEqual([
      expect.objectContaining({ tool: 'counter', input: { task: 'count' }, idempotencyKey: 'p:1', childTraceId: 'p-1', confidence: 0.4 }),
      expect.objectContaining({ tool: 'counter', input: { task: 'count again' }, idempotencyKey: 'p:2', childTraceId: 'p-2', confidence: 0 }),
    ]);
    expect(completed.map((event) => event.data)).toEqual([
      expect.objectContaining({ ok: true, childTraceId: 'p-1', output: { status: 'done', reason: 'final_answer', answer: 'counted to two' } }),
      expect.objectContaining({ ok: true, childTraceId: 'p-2', output: { status: 'done', reason: 'final_answer', answer: 'counted to two' } }),
    ]);
    expect(result.envelope.tools.history.map((call) => call.childTraceId)).toEqual(['p-1', 'p-2']);
    for (const [iteration, child] of [[1, 'p-1'], [2, 'p-2']] as const) {
      const logged = await events(child);
      const started = logged[0];
      expect(started?.type === 'run.started' && started.data).toMatchObject({
        input: iteration === 1 ? 'count' : 'count again',
        parent: { traceId: 'p', iteration, idempotencyKey: `p:${iteration}`, tool: 'counter' },
        flow: { id: 'parent/counter' },
        timeoutMs: 300_000,
      });
      expect(fold(logged).observability.outcome).toMatchObject({ status: 'done', answer: 'counted to two' });
    }
    // The live envelope is the fold of the parent's log (invariant 2 holds across the call).
    expect(fold(parent)).toEqual(result.envelope);
    expect(await counted('parent/counter')).toEqual(['p-1:1', 'p-1:2', 'p-2:1', 'p-2:2']);
  });

  it('gives a delegation to an agent id that is no connected subagent its handoff, as before', async () => {
    const file = await flow('handoff', {
      answers: [delegate('billing', 'refund order 7')],
      subagents: { counter: { flow: '../parent/counter/flow.json' } },
    });
    // The subagent is outside the flow's folder: allowed with allowFiles, as --allow-files does.
    const result = await run(file, 'h', { allowFiles: [dir] });
    expect(result.outcome).toMatchObject({ status: 'delegate', handoff: { agentId: 'billing', task: 'refund order 7' } });
  });

  it('continues a call sent again after a crash from the child log, and answers from it once the child has ended: each run once', async () => {
    const baseline = await events('p');
    const cut = baseline.findIndex((event) => event.type === 'tool.requested' && event.iteration === 2) + 1;
    const childLog = await events('p-2');
    const before = (await counted('parent/counter')).length;
    // The parent died right after asking for its second call; the child had made one of its calls.
    const crashed = [
      ['c.jsonl', baseline.slice(0, cut), 'c'],
      ['c-2.jsonl', childLog.slice(0, 5), 'c-2'],
      ['c-1.jsonl', await events('p-1'), 'c-1'],
    ] as const;
    for (const [file, logged, traceId] of crashed) {
      const renamed = logged.map((event) => rename(event, 'p', 'c', traceId));
      await writeFile(path.join(runs, file), encodeJsonlLog(renamed));
    }
    const resumed = await resumeFromLog({ logPath: path.join(runs, 'c.jsonl'), fsync: 'never' });
    const result = await resumed.finished();
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'the counter counted, twice' });
    const child = await events('c-2');
    expect(child.filter((event) => event.type === 'run.started')).toHaveLength(1);
    expect(child.filter((event) => event.type === 'run.resumed')).toHaveLength(1);
    expect(child.at(-1)?.type).toBe('run.completed');
    // The child's first call was logged complete, so only its second one ran again.
    expect((await counted('parent/counter')).slice(before)).toEqual(['c-2:2']);
    const parent = await events('c');
    expect(parent.filter((event) => event.type === 'tool.completed').map((event) => event.data)).toEqual([
      expect.objectContaining({ childTraceId: 'c-1', ok: true }),
      expect.objectContaining({ childTraceId: 'c-2', ok: true }),
    ]);
  });

  it('refuses to take a log at the child run\'s place that another call started: SUBAGENT_TRACE_TAKEN, the parent goes on', async () => {
    const file = await flow('taken', {
      answers: [tool('counter', { task: 'count' }), final('could not count')],
      subagents: { counter: { flow: '../parent/counter/flow.json' } },
    });
    // A run logged as t-1 that is not this call's: a top-level run with that trace id.
    await run(path.join(dir, 'parent/counter/flow.json'), 't-1');
    const result = await run(file, 't', { allowFiles: [dir] });
    expect(result.outcome).toMatchObject({ status: 'done' });
    const failed = (await events('t')).find((event) => event.type === 'tool.completed');
    expect(failed?.data).toMatchObject({ ok: false, error: { code: ErrorCode.SUBAGENT_TRACE_TAKEN }, childTraceId: 't-1' });
  });

  it('aborts the child run when the parent is aborted', async () => {
    await flow('abort/slow', { answers: [tool('hang', {})], tools: { hang: HANG }, agent: { allowedTools: ['hang'] } });
    const file = await flow('abort', { answers: [tool('slow', { task: 'wait' })], subagents: { slow: { flow: 'slow/flow.json' } } });
    const controller = new AbortController();
    const result = await run(file, 'a', {
      signal: controller.signal,
      // The child's call is under way: abort the parent.
      onSubagentEvent: (event) => {
        if (event.type === 'tool.requested') controller.abort('enough');
      },
    });
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
    const child = fold(await events('a-1'));
    expect(child.observability.outcome).toMatchObject({ status: 'blocked', reason: 'aborted', error: { code: ErrorCode.RUN_ABORTED } });
  });

  it("aborts the child run when the parent's own timeout ends the call", async () => {
    await flow('parent-timeout/slow', { answers: [tool('hang', {})], tools: { hang: HANG }, agent: { allowedTools: ['hang'] } });
    const file = await flow('parent-timeout', { answers: [tool('slow', { task: 'wait' })], subagents: { slow: { flow: 'slow/flow.json' } } });
    const result = await run(file, 'pt', { timeoutMs: 300 });
    expect(result.outcome).toMatchObject({ status: 'blocked', reason: 'timeout' });
    expect(fold(await events('pt-1')).observability.outcome).toMatchObject({ status: 'blocked', reason: 'aborted' });
  });

  it('gives a delegation to a connected subagent left out of allowedTools its handoff: only an allowed subagent is called', async () => {
    const file = await flow('not-allowed', {
      answers: [delegate('counter', 'count'), final('unused')],
      subagents: { counter: { flow: '../parent/counter/flow.json' } },
      tools: { bump: BUMP },
      agent: { allowedTools: ['bump'] },
    });
    const result = await run(file, 'na', { allowFiles: [dir] });
    expect(result.outcome).toMatchObject({ status: 'delegate', handoff: { agentId: 'counter', task: 'count' } });
    await expect(readFile(path.join(runs, 'na-1.jsonl'))).rejects.toThrow();
  });

  it("ends the child run at its own timeout: the call fails with SUBAGENT_FAILED and the parent's model reads why", async () => {
    await flow('timeout/slow', { answers: [tool('hang', {})], tools: { hang: HANG }, agent: { allowedTools: ['hang'] } });
    const file = await flow('timeout', {
      answers: [tool('slow', { task: 'wait' }), final('it took too long')],
      subagents: { slow: { flow: 'slow/flow.json', timeoutMs: 300 } },
    });
    const result = await run(file, 'o');
    expect(result.outcome).toMatchObject({ status: 'done', answer: 'it took too long' });
    const completed = (await events('o')).find((event) => event.type === 'tool.completed');
    expect(completed?.data).toMatchObject({ ok: false, childTraceId: 'o-1', error: { code: ErrorCode.SUBAGENT_FAILED, message: expect.stringContaining('RUN_TIMEOUT') } });
    expect(fold(await events('o-1')).observability.outcome).toMatchObject({ status: 'blocked', reason: 'timeout' });
    // The parent's run waits for the call as long as the child may run (300 ms + the margin), not less.
    const started = (await events('o'))[0];
    expect(started?.type === 'run.started' && started.data.tools[0]?.subagent).toEqual({ flow: 'slow/flow.json', timeoutMs: 300 });
  });

  it('never parks a child run: its question to a person ends it escalate at once, and the parent sees the question', async () => {
    await flow('ask/asker', { answers: [{ action: 'request_info', input: { question: 'which order?' } }], tools: { bump: BUMP }, agent: { allowedTools: ['bump'] } });
    const file = await flow('ask', { answers: [tool('asker', { task: 'find it' }), final('I need the order number')], subagents: { asker: { flow: 'asker/flow.json' } } });
    const result = await run(file, 'q');
    expect(result.outcome).toMatchObject({ status: 'done' });
    const completed = (await events('q')).find((event) => event.type === 'tool.completed');
    expect(completed?.data).toMatchObject({
      ok: true,
      output: { status: 'escalate', reason: 'info_requested', question: { action: 'request_info', question: 'which order?' } },
    });
  });
});

/** The event as if it were of run `to` (the parent `from` renamed `to`, in ids and links). */
function rename(event: AgentEvent, from: string, to: string, traceId: string): AgentEvent {
  const text = JSON.stringify({ ...event, traceId, id: `${traceId}:${event.seq}` })
    .replaceAll(`"${from}:`, `"${to}:`)
    .replaceAll(`"${from}-`, `"${to}-`)
    .replaceAll(`"traceId":"${from}"`, `"traceId":"${to}"`);
  return JSON.parse(text) as AgentEvent;
}
