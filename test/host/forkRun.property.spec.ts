import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEnvelope } from '../../src/contracts/schema-types.js';
import { ErrorCode } from '../../src/errors.js';
import { fold } from '../../src/events/evolve.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { runFlowFile } from '../../src/host/embeddedFlowRun.js';
import { forkRun } from '../../src/host/forkRun.js';
import { createSequentialIds } from '../../src/runtime/ids.js';

const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples');
const ORDER_FLOW = path.join(EXAMPLES, 'order-status', 'flow.json');
const ANSWER_REPAIR_FLOW = path.join(EXAMPLES, 'answer-repair', 'flow.json');

let dir: string;
/** Each recorded example run: its log and its events. */
const recorded = new Map<string, { log: string; events: readonly AgentEvent[]; iterations: number }>();

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'redflow-fork-'));
  for (const [name, flowPath, input] of [
    ['order-status', ORDER_FLOW, 'Where is my order A-1001?'],
    ['answer-repair', ANSWER_REPAIR_FLOW, 'Look up A-1'],
  ] as const) {
    const log = path.join(dir, `${name}.jsonl`);
    const run = await runFlowFile({ flowPath, input, logPath: log, fsync: 'never' });
    await run.finished().catch(() => undefined);
    const { events } = await readJsonlLog(log);
    const iterations = Math.max(...events.filter((e) => e.type === 'model.requested').map((e) => e.iteration));
    recorded.set(name, { log, events, iterations });
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The parts of a run's log that are its own, not its ids or its clock's. */
function comparable(events: readonly AgentEvent[]) {
  return events.map(({ type, iteration, data }) => ({ type, iteration, data: withoutTimes(data) }));
}

function withoutTimes(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (key, inner: unknown) => (['durationMs', 'startedAt', 'deadline', 'idempotencyKey', 'childTraceId'].includes(key) ? undefined : inner));
}

function envelopeWithoutRun(envelope: AgentEnvelope): unknown {
  const { lineage: _lineage, ...rest } = envelope;
  return withoutTimes({ ...rest, observability: { ...rest.observability, traceId: undefined } });
}

let forks = 0;
const nextLog = () => path.join(dir, `fork-${++forks}.jsonl`);

describe('forkRun', () => {
  it('should re-fold a fork\'s prefix to its parent\'s state at every iteration it is forked at, and reproduce the rest of the parent\'s log with no change', async () => {
    const cases = fc.constantFrom(...recorded.keys()).chain((name) => fc.record({ name: fc.constant(name), at: fc.integer({ min: 1, max: (recorded.get(name) as { iterations: number }).iterations }) }));
    await fc.assert(
      fc.asyncProperty(cases, async ({ name, at }) => {
        const parent = recorded.get(name) as { log: string; events: readonly AgentEvent[] };
        const logPath = nextLog();
        const fork = await forkRun({ from: parent.log, at, logPath, fsync: 'never', ids: createSequentialIds(`f${forks}`) });
        await fork.finished();
        const { events, problems } = await readJsonlLog(logPath);
        expect(problems).toEqual([]);
        expect(events[1]).toMatchObject({ type: 'run.forked', data: { parent: { traceId: parent.events[0]?.traceId, log: parent.log }, atIteration: at } });
        const atSeq = (events[1] as Extract<AgentEvent, { type: 'run.forked' }>).data.atSeq;
        // The prefix: the parent's events 1..atSeq, after the fork's run.started and run.forked.
        const prefix = events.slice(0, atSeq + 1);
        const parentPrefix = parent.events.slice(0, atSeq);
        expect(envelopeWithoutRun(fold(prefix, fork.traceId))).toEqual(envelopeWithoutRun(fold(parentPrefix, parent.events[0]?.traceId)));
        expect(fold(prefix, fork.traceId).lineage).toEqual({ parent: { traceId: parent.events[0]?.traceId, log: parent.log }, atSeq });
        // The rest: the resume marker, then what the parent recorded after the fork point.
        const rest = events.slice(atSeq + 1);
        expect(rest[0]?.type).toBe('run.resumed');
        // Live from the start of the iteration forked at: its model call is the first step made again.
        expect(rest[1]).toMatchObject({ type: 'model.requested', iteration: at });
        expect(comparable(rest.slice(1))).toEqual(comparable(parent.events.slice(atSeq)));
      }),
      { numRuns: 8 },
    );
  });

  it('should leave the parent\'s log as it was', async () => {
    const parent = recorded.get('order-status') as { log: string };
    const before = await readFile(parent.log, 'utf8');
    await (await forkRun({ from: parent.log, at: 2, logPath: nextLog(), fsync: 'never' })).finished();
    expect(await readFile(parent.log, 'utf8')).toBe(before);
  });

  it('should give the scripted answers and tool results of a fork instead of live calls', async () => {
    const parent = recorded.get('order-status') as { log: string };
    const logPath = nextLog();
    const final = { action: 'final', message: 'It is on the moon.', confidence: 0.9 };
    const fork = await forkRun({ from: parent.log, at: 2, logPath, fsync: 'never', toolResults: { 2: { status: 'lost' } }, answers: { 3: final } });
    const { outcome } = await fork.finished();
    expect(outcome.status).toBe('done');
    const { events } = await readJsonlLog(logPath);
    expect(events.find((e) => e.type === 'tool.completed' && e.iteration === 2)?.data).toMatchObject({ ok: true, output: { status: 'lost' } });
    expect(events.at(-1)?.data).toMatchObject({ outcome: { answer: 'It is on the moon.' } });
  });

  it('should refuse a fork point before iteration 1 or past the log\'s end with FORK_POINT_OUT_OF_RANGE', async () => {
    const parent = recorded.get('order-status') as { log: string; iterations: number };
    for (const at of [0, parent.iterations + 1, 1.5]) {
      await expect(forkRun({ from: parent.log, at, logPath: nextLog() })).rejects.toMatchObject({ code: ErrorCode.FORK_POINT_OUT_OF_RANGE });
    }
  });

  it('should refuse a flow without a tool the prefix called with FORK_PREFIX_INCOMPATIBLE naming the event', async () => {
    const parent = recorded.get('order-status') as { log: string; events: readonly AgentEvent[] };
    const flow = JSON.parse(await readFile(ORDER_FLOW, 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[]; edges: { target: string }[] };
    flow.nodes = flow.nodes.filter((node) => node.id !== 'lookup_order');
    flow.edges = flow.edges.filter((edge) => edge.target !== 'lookup_order');
    const agent = flow.nodes.find((node) => node.id === 'agent') as unknown as { config: { allowedTools: string[] } };
    agent.config.allowedTools = ['track_shipment'];
    const changed = path.join(EXAMPLES, 'order-status', `.fork-test-${process.pid}.json`);
    await writeFile(changed, JSON.stringify(flow));
    try {
      const requested = parent.events.find((e) => e.type === 'tool.requested') as AgentEvent;
      await expect(forkRun({ from: parent.log, at: 3, flow: changed, logPath: nextLog() })).rejects.toMatchObject({
        code: ErrorCode.FORK_PREFIX_INCOMPATIBLE,
        message: expect.stringContaining(`event ${requested.seq}`),
      });
      // Forked before the call, the same flow is fine: the model just has one tool less from there.
      await expect(forkRun({ from: parent.log, at: 1, flow: changed, logPath: nextLog(), script: [{ action: 'final', message: 'ok', confidence: 1 }] }).then((f) => f.finished())).resolves.toMatchObject({ outcome: { status: 'done' } });
    } finally {
      await rm(changed, { force: true });
    }
  });

  it('should refuse a flow whose trigger no longer takes the recorded input with FORK_PREFIX_INCOMPATIBLE, and find a parent by its trace id', async () => {
    const parent = recorded.get('order-status') as { log: string; events: readonly AgentEvent[] };
    const flow = JSON.parse(await readFile(ORDER_FLOW, 'utf8')) as { nodes: { id: string; config?: Record<string, unknown> }[] };
    const trigger = flow.nodes.find((node) => node.id === 'question') as { config?: Record<string, unknown> };
    trigger.config = { inputSchema: { type: 'object', required: ['orderId'] } };
    const changed = path.join(EXAMPLES, 'order-status', `.fork-trigger-${process.pid}.json`);
    await writeFile(changed, JSON.stringify(flow));
    try {
      await expect(forkRun({ from: parent.log, at: 1, flow: changed, logPath: nextLog() })).rejects.toMatchObject({
        code: ErrorCode.FORK_PREFIX_INCOMPATIBLE,
        message: expect.stringContaining('inputSchema refuses the recorded input'),
      });
    } finally {
      await rm(changed, { force: true });
    }
    // A trace id names `<runsDir>/<traceId>.jsonl`, as runs name their logs by default.
    const traceId = parent.events[0]?.traceId as string;
    const runsDir = path.join(dir, 'runs');
    await mkdir(runsDir, { recursive: true });
    await copyFile(parent.log, path.join(runsDir, `${traceId}.jsonl`));
    const byTraceId = await forkRun({ from: traceId, runsDir, at: 3, logPath: nextLog() });
    expect(byTraceId.parentLog).toBe(path.join(runsDir, `${traceId}.jsonl`));
    await expect(byTraceId.finished()).resolves.toMatchObject({ outcome: { status: 'done' } });
  });

  it('should refuse to fork a run whose log a live process holds with FORK_RUN_STILL_RUNNING', async () => {
    const parent = recorded.get('order-status') as { log: string; events: readonly AgentEvent[] };
    const unfinished = path.join(dir, 'unfinished.jsonl');
    const text = await readFile(parent.log, 'utf8');
    await writeFile(unfinished, text.split('\n').slice(0, 4).join('\n') + '\n');
    await writeFile(`${unfinished}.lock`, `${process.pid}\n`);
    await expect(forkRun({ from: unfinished, at: 1, logPath: nextLog() })).rejects.toMatchObject({ code: ErrorCode.FORK_RUN_STILL_RUNNING });
    await rm(`${unfinished}.lock`);
    await expect(forkRun({ from: unfinished, at: 1, logPath: nextLog() }).then((f) => f.finished())).resolves.toMatchObject({ outcome: { status: 'done' } });
  });

  it('should refuse a damaged parent log with its own integrity code', async () => {
    const parent = recorded.get('order-status') as { log: string };
    const damaged = path.join(dir, 'damaged.jsonl');
    const lines = (await readFile(parent.log, 'utf8')).split('\n');
    lines[2] = (lines[2] as string).replace('"iteration":1', '"iteration":7');
    await writeFile(damaged, lines.join('\n'));
    await expect(forkRun({ from: damaged, at: 1, logPath: nextLog() })).rejects.toMatchObject({ code: ErrorCode.LOG_RECORD_CORRUPT });
  });
});
